/* interpose/graph/graph_exec.c: an executable graph's life as ktrace follows it.
 *
 * Owns struct kt_gexec.  At instantiation ktrace clones the program's
 * graph into its *mirror* (cuGraphClone, the program's graph may change or
 * go away afterwards) and describes the mirror as revision 0 (GRAPH
 * record).  Node parameters the program sets on the exec are set on the
 * mirror's node too (its graph-level setter, the node found by its place in
 * the graph), and the next launch describes the mirror again (a new
 * revision, cause "node update"); cuGraphExecUpdate replaces the mirror by
 * a clone of the new graph (cause "exec update").  With hashing on, each
 * revision of a graph that can be instrumented gets ktrace's instrumented
 * copy (graph_hash.c).  A launch takes one block of launch_seq numbers for
 * the nodes it records and runs ktrace's copy (digests land later, written
 * by the poller thread) or the program's exec (records written at once).
 * Every field is guarded by the exec's lock; the registry
 * (graph_registry.c) keeps the exec alive while a call uses it.
 * In a replay run (KTRACE_REPLAY) a graph launch runs node by node when it
 * can (graph_replay.c), so that its kernel nodes can be confirmed; the one
 * launch that holds the named kernel node of a conditional body runs
 * ktrace's copy with gated copies around it (graph_body.c).
 * May call: the real driver (ktrace_real), the model, the hash state, the
 * records, the queue of launches in flight (graph_queue.c), the replay
 * run's node-by-node launches, the threads' ids and context cache
 * (model/), and through the services table the GPU times of a sampled graph
 * launch and the ranges each node was made in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/trace_writer.h"
#include "interpose/driver/driver_real.h"
#include "interpose/driver/hooks.h"
#include "interpose/graph/graph.h"
#include "interpose/graph/graph_internal.h"
#include "interpose/model/capture_thread.h"
#include "interpose/model/nvtx_now.h"
#include "interpose/model/services.h"

/* The nodes inside child graphs (any depth), the program's beside the
 * mirror's, so that a node the program sets on the exec inside a child
 * graph (XLA sets copies inside its command buffers' child graphs) is set on
 * the mirror too.  Taken while the program's graph is alive: the driver is
 * never asked about the program's handles later. */
struct kt_nested {
	CUgraphNode *user, *mine;
	uint32_t n, cap;
};

struct kt_gexec {
	pthread_mutex_t lock;
	CUgraphExec handle;
	uint64_t id, graph_id, flags;
	CUcontext ctx;
	int32_t device;
	CUgraph mirror;            /* NULL: the clone failed, rev describes the program's graph as instantiated */
	uint32_t ntop;
	CUgraphNode *user_top[2];  /* the program's top-level nodes: at instantiation, at the last update */
	CUgraphNode *mirror_top;   /* the mirror's, in the same order */
	struct kt_nested nested;   /* the nodes inside child graphs: the program's (last update) and the mirror's */
	CUgraphNode *nested_user0; /* the program's at instantiation, in the same order; NULL: not comparable */
	int unfollowed;            /* a node set the mirror could not follow: the program's exec runs,
				    * unhashed, until the exec is updated from a graph */
	uint8_t *disabled;         /* per top-level node: disabled in the exec */
	struct kt_grev *rev;
	uint32_t next_revision;
	uint32_t untraced;         /* a reason that lasts (device launch, no mirror) */
	uint32_t noted;            /* the last reason a NOTE was written for */
	int replay_noted;          /* a replay run's NOTE that it runs as a graph is written */
	int dirty;                 /* node parameters set since rev */
	uint64_t launches;
	struct kt_ghash *hash;     /* ktrace's instrumented copy; NULL: launches run the program's exec */
	struct kt_gbody *body;     /* a replay run's copy for the body kernel node to confirm (graph_body.c) */
};

/* ---- the mirror ------------------------------------------------------------------------ */

/* g's top-level nodes (malloc'd) and their count.  NULL when none or unknown. */
static CUgraphNode *top_nodes(CUgraph g, uint32_t *n)
{
	size_t k = 0;
	CUgraphNode *v;

	*n = 0;
	if (KT_REAL(cuGraphGetNodes, g, NULL, &k) != CUDA_SUCCESS || !k)
		return NULL;
	v = calloc(k, sizeof(*v));
	if (v && KT_REAL(cuGraphGetNodes, g, v, &k) == CUDA_SUCCESS) {
		*n = (uint32_t)k;
		return v;
	}
	free(v);
	return NULL;
}

static int nested_add(struct kt_nested *t, CUgraphNode user, CUgraphNode mine)
{
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 64;
		CUgraphNode *u = realloc(t->user, cap * sizeof(*u));

		if (!u)
			return -1;
		t->user = u;
		u = realloc(t->mine, cap * sizeof(*u));
		if (!u)
			return -1;
		t->mine = u;
		t->cap = cap;
	}
	t->user[t->n] = user;
	t->mine[t->n++] = mine;
	return 0;
}

/* Map the nodes of child graph ug (the program's) to those of mg (its clone
 * in the mirror), in the driver's node order, kinds checked, depth-first.
 * 0, or -1 when the two differ (the map is then incomplete: sets on the
 * nodes left out are not followed, and say so). */
static int nested_map(struct kt_nested *t, CUgraph ug, CUgraph mg, int depth)
{
	uint32_t n, m;
	CUgraphNode *u = top_nodes(ug, &n), *v = top_nodes(mg, &m);
	int rc = (n == m && depth < KT_GRAPH_MAX_DEPTH) ? 0 : -1;

	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		CUgraphNodeType tu, tv;
		CUgraph cu, cv;

		if (KT_REAL(cuGraphNodeGetType, u[i], &tu) || KT_REAL(cuGraphNodeGetType, v[i], &tv) || tu != tv ||
		    (depth && nested_add(t, u[i], v[i]))) {
			rc = -1;
		} else if (tu == CU_GRAPH_NODE_TYPE_GRAPH) {
			if (KT_REAL(cuGraphChildGraphNodeGetGraph, u[i], &cu) ||
			    KT_REAL(cuGraphChildGraphNodeGetGraph, v[i], &cv) || nested_map(t, cu, cv, depth + 1))
				rc = -1;
		}
	}
	free(u);
	free(v);
	return rc;
}

/* Map the nodes inside g's child graphs to the (new) mirror's.  At an update
 * the instantiation's handles stay usable while the two lists match. */
static void nested_remap(struct kt_gexec *x, CUgraph g, int which)
{
	struct kt_nested t = { 0 };

	if (nested_map(&t, g, x->mirror, 0))
		t.n = 0; /* an incomplete map would pair the wrong nodes */
	if (!which || t.n != x->nested.n) {
		free(x->nested_user0);
		x->nested_user0 = NULL;
		if (!which && t.n && (x->nested_user0 = malloc(t.n * sizeof(*t.user))))
			memcpy(x->nested_user0, t.user, t.n * sizeof(*t.user));
	}
	free(x->nested.user);
	free(x->nested.mine);
	x->nested = t;
}

/* Clone g into x's mirror and map g's top-level nodes to the mirror's.
 * which: 0 at instantiation, 1 at an update.  0 or -1 (mirror unchanged). */
static int mirror_from(struct kt_gexec *x, CUgraph g, int which)
{
	CUgraph m = NULL;
	CUgraphNode *user, *mine;
	uint32_t n;
	CUresult r = KT_REAL(cuGraphClone, &m, g);

	/* NOT_SUPPORTED: a graph of conditional or memory nodes, which the
	 * driver does not clone (expected; no failure for a later NOTE) */
	if (r == CUDA_ERROR_NOT_SUPPORTED || kt_graph_failed("cuGraphClone", r))
		return -1;
	user = top_nodes(g, &n);
	mine = calloc(n + 1, sizeof(*mine));
	for (uint32_t i = 0; mine && i < n; i++)
		if (KT_REAL(cuGraphNodeFindInClone, &mine[i], user[i], m) != CUDA_SUCCESS)
			mine[i] = NULL;
	if (!mine || (which && n != x->ntop)) {
		free(user);
		free(mine);
		KT_REAL(cuGraphDestroy, m);
		return -1;
	}
	if (x->mirror)
		KT_REAL(cuGraphDestroy, x->mirror);
	x->mirror = m;
	free(x->mirror_top);
	x->mirror_top = mine;
	nested_remap(x, g, which);
	free(x->user_top[which]);
	x->user_top[which] = user;
	if (!which) {
		x->ntop = n;
		x->disabled = calloc(n + 1, 1);
	}
	return 0;
}

/* The place among the top-level nodes of a node the program names, or NONE. */
static uint32_t top_place(const struct kt_gexec *x, CUgraphNode node)
{
	for (int w = 1; w >= 0; w--)
		for (uint32_t i = 0; x->user_top[w] && i < x->ntop; i++)
			if (x->user_top[w][i] == node)
				return i;
	return KT_GRAPH_NONE;
}

/* The mirror's node for a node the program names inside a child graph, or NULL. */
static CUgraphNode nested_place(const struct kt_gexec *x, CUgraphNode node)
{
	for (uint32_t i = 0; i < x->nested.n; i++)
		if (x->nested.user[i] == node || (x->nested_user0 && x->nested_user0[i] == node))
			return x->nested.mine[i];
	return NULL;
}

/* ---- revisions ------------------------------------------------------------------------- */

/* The program's handles on the top-level nodes, and which are disabled;
 * disabled[] receives their revision indexes. */
static uint32_t apply_exec_state(struct kt_gexec *x, struct kt_grev *r, uint32_t *disabled)
{
	const CUgraphNode *user = x->user_top[1] ? x->user_top[1] : x->user_top[0];
	uint32_t nd = 0;

	for (uint32_t i = 0; x->mirror_top && i < x->ntop; i++) {
		uint32_t idx = kt_grev_top_index(r, x->mirror_top[i]);

		if (idx == KT_GRAPH_NONE)
			continue;
		if (user)
			r->nodes[idx].rec.handle = (uint64_t)(uintptr_t)user[i];
		if (x->disabled && x->disabled[i]) {
			r->nodes[idx].rec.flags |= KTRACE_GNODEF_DISABLED;
			disabled[nd++] = idx;
		}
	}
	return nd;
}

static int can_hash(uint32_t untraced)
{
	return untraced == KTRACE_GRAPH_TRACED || untraced == KTRACE_GRAPH_UNTRACED_NODE_KIND;
}

/* With hashing: lay out r's digests and (re)build the instrumented copy. */
static void hash_revision(struct kt_gexec *x, struct kt_grev *r, const uint32_t *disabled, uint32_t nd)
{
	uint32_t why = KTRACE_GRAPH_TRACED;

	if (x->unfollowed && !r->untraced)
		r->untraced = KTRACE_GRAPH_UNTRACED_DRIVER;
	/* no mirror and no conditional node: new_revision made it untraced */
	if (x->unfollowed || !can_hash(r->untraced) || kt_ghash_plan(r, ktrace_tracer.cfg.hash_merge && !ktrace_tracer.cfg.replay)) {
		kt_ghash_release(x->hash);
		x->hash = NULL;
		return;
	}
	x->hash = kt_ghash_build(x->hash, x->mirror, r, x->flags, disabled, nd, &why);
	if (x->hash) {
		r->flags |= KTRACE_GRAPHF_HASHED;
		return;
	}
	if (!r->untraced)
		r->untraced = why;
	for (uint32_t i = 0; i < r->nnodes; i++)
		r->nodes[i].rec.flags &= (uint16_t)~KTRACE_GNODEF_HASHED;
}

static void note_untraced(struct kt_gexec *x, const struct kt_grev *r)
{
	static const char *const why[] = {
		[KTRACE_GRAPH_UNTRACED_DEVICE_LAUNCH] = "instantiated for device launch: launches made on the GPU are "
							"not seen, host launches are recorded unhashed",
		[KTRACE_GRAPH_UNTRACED_CONDITIONAL] = "it has a conditional node ktrace did not see made (its bodies "
						      "are unknown): they are not recorded, the other nodes are recorded "
						      "unhashed",
		[KTRACE_GRAPH_UNTRACED_NODE_KIND] = "it has a node of a kind ktrace does not know: that node is not "
						    "recorded",
		[KTRACE_GRAPH_UNTRACED_DRIVER] = "ktrace's instrumented copy of it could not be made (a driver "
						 "error): its launches are recorded unhashed",
		[KTRACE_GRAPH_UNTRACED_TOO_LARGE] = "it is larger than ktrace follows: its launches are not recorded",
		[KTRACE_GRAPH_UNTRACED_QUERY] = "the driver could not describe it: its launches are not recorded",
		[KTRACE_GRAPH_UNTRACED_MEMORY_NODES] = "it has memory allocation or free nodes, which a copy of it would "
						       "allocate apart: its launches are recorded unhashed",
	};

	if (!r->untraced || r->untraced == x->noted || r->untraced >= sizeof(why) / sizeof(why[0]))
		return;
	x->noted = r->untraced;
	kt_graph_note(x->id, x->graph_id, r->untraced, why[r->untraced]);
}

/* The ranges each node was made in (interpose/nvtx/): a top-level node's by
 * the program's handle (apply_exec_state), a child graph's node its own
 * child-graph node's (the driver copied the child graph into the node). */
static void node_ranges(struct kt_grev *r)
{
	for (uint32_t i = 0; i < r->nnodes; i++) {
		struct kt_gnode *n = &r->nodes[i];

		if (!ktrace_services.node_ref(n->rec.handle, &n->made) && n->rec.parent < i)
			n->made = r->nodes[n->rec.parent].made;
	}
}

/* Describe the graph the exec runs as a new revision and make it current. */
static void new_revision(struct kt_gexec *x, CUgraph described, uint32_t cause)
{
	struct kt_grev *r = kt_grev_describe(described, x->ctx);
	uint32_t *disabled, nd;

	if (!r)
		return;
	r->exec_id = x->id;
	r->graph_id = x->graph_id;
	r->revision = x->next_revision++;
	r->cause = cause;
	r->instantiate_flags = x->flags;
	r->device = x->device;
	if (x->untraced && (!r->untraced || r->untraced == KTRACE_GRAPH_UNTRACED_NODE_KIND))
		r->untraced = x->untraced;
	/* no mirror: the driver did not clone the graph; ktrace builds its copy
	 * of a graph of conditional nodes (graph_build.c), of no other */
	if (!x->mirror && !r->ncond && (!r->untraced || r->untraced == KTRACE_GRAPH_UNTRACED_NODE_KIND))
		r->untraced = KTRACE_GRAPH_UNTRACED_DRIVER;
	disabled = calloc(r->nnodes + 1, sizeof(*disabled));
	nd = disabled ? apply_exec_state(x, r, disabled) : 0;
	node_ranges(r);
	if (kt_grev_finish(r) == 0) {
		kt_grev_plan_regions(r, ktrace_tracer.cfg.hash);
		if (ktrace_tracer.cfg.hash)
			hash_revision(x, r, disabled, nd);
		if (kt_unlikely(ktrace_tracer.cfg.replay))
			x->body = kt_gbody_revision(x->body, r, x->id, x->launches);
	} else {
		x->body = kt_gbody_drop(x->body, "the exec's new revision could not be described (out of memory)");
	}
	free(disabled);
	kt_grev_write_record(r, ktrace_capture_tid());
	note_untraced(x, r);
	kt_grev_release(x->rev);
	x->rev = r;
	x->dirty = 0;
}

/* ---- life -------------------------------------------------------------------------------- */

struct kt_gexec *kt_gexec_new(CUgraphExec e, CUgraph g, uint64_t flags)
{
	struct kt_gexec *x = calloc(1, sizeof(*x));
	CUstreamCaptureMode mode;
	int began;

	if (!x)
		return NULL;
	pthread_mutex_init(&x->lock, NULL);
	x->handle = e;
	x->id = kt_graph_new_exec_id();
	x->graph_id = kt_graph_id(g);
	x->flags = flags;
	x->ctx = ktrace_capture_context(&x->device);
	if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)
		x->untraced = KTRACE_GRAPH_UNTRACED_DEVICE_LAUNCH;
	began = ktrace_real_capture_relax(&mode);
	if (mirror_from(x, g, 0)) {
		new_revision(x, g, KTRACE_GRAPH_INSTANTIATE); /* described once, from the program's graph */
	} else {
		new_revision(x, x->mirror, KTRACE_GRAPH_INSTANTIATE);
	}
	ktrace_real_capture_restore(mode, began);
	return x;
}

void kt_gexec_free(struct kt_gexec *x)
{
	CUstreamCaptureMode mode;
	int began;

	if (!x)
		return;
	began = ktrace_real_capture_relax(&mode);
	kt_ghash_release(x->hash);
	kt_gbody_free(x->body);
	if (x->mirror)
		KT_REAL(cuGraphDestroy, x->mirror);
	ktrace_real_capture_restore(mode, began);
	kt_grev_release(x->rev);
	free(x->user_top[0]);
	free(x->user_top[1]);
	free(x->mirror_top);
	free(x->disabled);
	free(x->nested.user);
	free(x->nested.mine);
	free(x->nested_user0);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

void kt_gexec_updated(struct kt_gexec *x, CUgraph g)
{
	CUstreamCaptureMode mode;
	int began;

	pthread_mutex_lock(&x->lock);
	began = ktrace_real_capture_relax(&mode);
	x->graph_id = kt_graph_id(g);
	x->unfollowed = 0; /* described from the program's graph again, mirror or not */
	if (x->mirror && mirror_from(x, g, 1) == 0) {
		new_revision(x, x->mirror, KTRACE_GRAPH_EXEC_UPDATE);
	} else {
		/* no copy to follow (the driver clones no graph of conditional or
		 * memory nodes): described from the program's graph, unhashed */
		if (x->mirror)
			KT_REAL(cuGraphDestroy, x->mirror);
		x->mirror = NULL;
		free(x->mirror_top);
		x->mirror_top = NULL;
		new_revision(x, g, KTRACE_GRAPH_EXEC_UPDATE);
	}
	ktrace_real_capture_restore(mode, began);
	pthread_mutex_unlock(&x->lock);
}

/* Set the mirror's node m as the program set its exec's node.  0 or -1. */
static int set_on_mirror(CUgraphNode m, const struct ktrace_graph_node_set *s)
{
	CUDA_KERNEL_NODE_PARAMS k;
	CUgraphNodeParams p;

	switch (s->what) {
	case KTRACE_GSET_KERNEL_V1:
		memset(&k, 0, sizeof(k));
		memcpy(&k, s->kernel_v1, sizeof(*s->kernel_v1)); /* v2 starts with v1's fields */
		return KT_REAL(cuGraphKernelNodeSetParams_v2, m, &k) == CUDA_SUCCESS ? 0 : -1;
	case KTRACE_GSET_KERNEL:
		return KT_REAL(cuGraphKernelNodeSetParams_v2, m, s->kernel) == CUDA_SUCCESS ? 0 : -1;
	case KTRACE_GSET_MEMCPY:
		return KT_REAL(cuGraphMemcpyNodeSetParams, m, s->copy) == CUDA_SUCCESS ? 0 : -1;
	case KTRACE_GSET_MEMSET:
		return KT_REAL(cuGraphMemsetNodeSetParams, m, s->set) == CUDA_SUCCESS ? 0 : -1;
	case KTRACE_GSET_GENERIC:
		return KT_REAL(cuGraphNodeSetParams, m, s->generic) == CUDA_SUCCESS ? 0 : -1;
	case KTRACE_GSET_CHILD:
		memset(&p, 0, sizeof(p));
		p.type = CU_GRAPH_NODE_TYPE_GRAPH;
		p.graph.graph = s->child;
		return KT_REAL(cuGraphNodeSetParams, m, &p) == CUDA_SUCCESS ? 0 : -1;
	default:
		return -1;
	}
}

/* The program set a node on its exec that the mirror could not follow: ktrace's
 * copy would no longer run what the program's exec runs, so from now on (until
 * the exec is updated from a graph) the program's exec runs, its launches
 * recorded unhashed with the parameters ktrace knows. */
static void not_followed(struct kt_gexec *x)
{
	x->unfollowed = 1;
	kt_ghash_release(x->hash);
	x->hash = NULL;
	x->body = kt_gbody_drop(x->body, "node parameters set on the exec could not be followed by ktrace's copy");
	if (x->noted == KTRACE_GRAPH_UNTRACED_DRIVER)
		return;
	x->noted = KTRACE_GRAPH_UNTRACED_DRIVER;
	kt_graph_note(x->id, x->graph_id, KTRACE_GRAPH_UNTRACED_DRIVER,
		      "node parameters set on the exec could not be followed: until the exec is updated from a "
		      "graph, its launches run the program's exec, recorded unhashed with the parameters ktrace "
		      "knows");
}

void kt_gexec_node_set(struct kt_gexec *x, const void *set)
{
	const struct ktrace_graph_node_set *s = set;
	CUstreamCaptureMode mode;
	CUgraphNode nested;
	uint32_t i;
	int began, rc = 0;

	pthread_mutex_lock(&x->lock);
	i = top_place(x, s->node);
	nested = i == KT_GRAPH_NONE && x->mirror ? nested_place(x, s->node) : NULL;
	began = ktrace_real_capture_relax(&mode);
	if (nested && s->what != KTRACE_GSET_ENABLED)
		rc = set_on_mirror(nested, s);
	else if (!x->mirror || i == KT_GRAPH_NONE || !x->mirror_top[i])
		rc = -1;
	else if (s->what == KTRACE_GSET_ENABLED)
		x->disabled[i] = !s->enabled;
	else
		rc = set_on_mirror(x->mirror_top[i], s);
	ktrace_real_capture_restore(mode, began);
	if (rc)
		not_followed(x);
	x->dirty = 1;
	pthread_mutex_unlock(&x->lock);
}

void kt_gexec_upload(struct kt_gexec *x, CUstream s)
{
	pthread_mutex_lock(&x->lock);
	if (x->hash)
		kt_ghash_upload(x->hash, s);
	pthread_mutex_unlock(&x->lock);
}

void kt_gexec_context_destroyed(struct kt_gexec *x, CUcontext ctx)
{
	pthread_mutex_lock(&x->lock);
	if (x->hash && kt_ghash_context(x->hash) == ctx) {
		kt_ghash_context_gone(x->hash);
		kt_ghash_release(x->hash);
		x->hash = NULL;
	}
	x->body = kt_gbody_context_gone(x->body, ctx);
	pthread_mutex_unlock(&x->lock);
}

/* ---- launches ---------------------------------------------------------------------------- */

/* Run the launch hashed: ktrace's exec, then the copy of the results.  1
 * when the records go to the queue (graph_queue.c); 0 when the program's exec ran
 * instead (or the digests will not come): the caller writes them. */
static int launch_hashed(struct kt_gexec *x, struct kt_glaunch *l, CUstream s, ktrace_real_graph_launch_fn real,
			 void *ctx, CUresult *res)
{
	struct kt_gslot *slot;
	CUgraphExec ie;
	CUstreamCaptureMode mode;
	int began = ktrace_real_capture_relax(&mode);

	l->hash_skip = KTRACE_HASH_SKIP_UNAVAILABLE; /* the graph could not be instrumented */
	slot = x->hash ? kt_ghash_slot(x->hash, l->rev->result_words, s, &ie, &l->hash_skip) : NULL;
	ktrace_real_capture_restore(mode, began);
	if (!slot) {
		*res = real(x->handle, ctx);
		return 0;
	}
	*res = real(ie, ctx);
	began = ktrace_real_capture_relax(&mode);
	l->result = *res;
	l->hashed = kt_ghash_after_launch(x->hash, slot, s, l->rev->result_words, *res) == 0;
	ktrace_real_capture_restore(mode, began);
	if (!l->hashed)
		return 0;
	kt_gthread_queue(l, x->hash, slot);
	return 1;
}

/* In a replay run: can x's launch run node by node?  When it cannot, a
 * NOTE says why, once per exec (its kernel nodes cannot be confirmed). */
static int replay_node_by_node(struct kt_gexec *x)
{
	const char *why = kt_grev_node_by_node_why(x->rev);
	char text[384];

	if (!why)
		return 1;
	if (!x->replay_noted) {
		x->replay_noted = 1;
		snprintf(text, sizeof(text), "graph exec %llu (graph %llu) runs as one graph launch in this replay "
			 "run, its kernel nodes are %s: %s", (unsigned long long)x->id,
			 (unsigned long long)x->graph_id, x->rev && x->rev->ncond ?
			 "replayed only from their graph launch (KTRACE_REPLAY's graph_exec, graph_launch and node)" :
			 "not replayed", why);
		ktrace_tracer_note(KTRACE_NOTE_WARN, KTRACE_NOTE_CODE_GRAPH, text);
	}
	return 0;
}

/* GPU times (interpose/capture/gpu_times.h): the whole graph launch, the
 * program's exec or ktrace's instrumented copy, between two events on its
 * stream, recorded under the first launch_seq it took. */
struct gpu_timed_graph {
	ktrace_real_graph_launch_fn real;
	void *ctx;
	CUstream stream;
	uint64_t seq;
};

static CUresult gpu_timed_graph_call(CUgraphExec e, void *ctx)
{
	struct gpu_timed_graph *g = ctx;
	struct ktrace_gpu_sample *smp = ktrace_services.gpu_times_begin(g->stream, g->seq, KTRACE_GPUTIMEF_GRAPH);
	CUresult res = g->real(e, g->ctx);

	ktrace_services.gpu_times_end(smp, g->stream, res);
	return res;
}

CUresult kt_gexec_launch(struct kt_gexec *x, CUstream s, void *realp, void *ctx)
{
	ktrace_real_graph_launch_fn real = (ktrace_real_graph_launch_fn)realp;
	struct gpu_timed_graph gt;
	struct kt_glaunch l = { 0 };
	CUresult res;

	pthread_mutex_lock(&x->lock);
	if (x->dirty && x->mirror) {
		CUstreamCaptureMode mode;
		int began = ktrace_real_capture_relax(&mode);

		new_revision(x, x->mirror, KTRACE_GRAPH_NODE_UPDATE);
		ktrace_real_capture_restore(mode, began);
	}
	if (!x->rev || ktrace_stream_capturing(s)) { /* a capture makes it a child graph node */
		res = real(x->handle, ctx);
		pthread_mutex_unlock(&x->lock);
		return res;
	}
	if (kt_unlikely(ktrace_tracer.cfg.replay) && replay_node_by_node(x)) {
		/* a replay run: each kernel node a launch the replay's matcher sees */
		res = kt_grev_run_node_by_node(x->rev, s);
		pthread_mutex_unlock(&x->lock);
		return res;
	}
	l.rev = x->rev;
	kt_grev_hold(l.rev);
	l.launch = x->launches++;
	l.seq = atomic_fetch_add_explicit(&ktrace_tracer.launch_seq, l.rev->nseq, memory_order_relaxed);
	l.stream = (uint64_t)(uintptr_t)s;
	l.context = (uint64_t)(uintptr_t)x->ctx;
	l.tid = ktrace_capture_tid();
	l.device = x->device;
	l.time_ns = ktrace_now_ns();
	ktrace_nvtx_ref(&l.range);
	ktrace_writer_count(ktrace_tracer.writer, KTRACE_CTR_GRAPH_LAUNCHES, 1);
	if (l.rev->nrec && ktrace_gpu_times_sampled(l.seq) &&
	    !atomic_load_explicit(&ktrace_tracer.paused, memory_order_relaxed)) {
		gt = (struct gpu_timed_graph){ real, ctx, s, l.seq };
		real = gpu_timed_graph_call;
		ctx = &gt;
	}
	if (atomic_load_explicit(&ktrace_tracer.paused, memory_order_relaxed)) {
		ktrace_writer_count(ktrace_tracer.writer, KTRACE_CTR_LAUNCHES_PAUSED, l.rev->nrec);
		res = real(x->handle, ctx);
	} else if (kt_unlikely(ktrace_tracer.cfg.replay) && kt_gbody_target(x->id, l.launch)) {
		/* a replay run's graph launch holding the body kernel node to confirm */
		res = kt_gbody_launch(x->body, l.rev, x->handle, s, real, ctx, l.seq);
		kt_gbody_free(x->body); /* one launch is named */
		x->body = NULL;
		l.result = res;
		kt_glaunch_write(&l);
	} else if (ktrace_tracer.cfg.hash && launch_hashed(x, &l, s, real, ctx, &res)) {
		l.rev = NULL; /* the queue holds it now */
	} else {
		if (ktrace_tracer.cfg.hash)
			ktrace_writer_count(ktrace_tracer.writer, KTRACE_CTR_GRAPH_LAUNCHES_UNHASHED, 1);
		if (!ktrace_tracer.cfg.hash)
			res = real(x->handle, ctx);
		l.result = res;
		l.hashed = 0;
		kt_glaunch_write(&l);
	}
	pthread_mutex_unlock(&x->lock);
	kt_grev_release(l.rev);
	return res;
}
