/* interpose/graph/graph_body.c: a replay run's copy of the graph that holds
 * the kernel node to confirm inside a conditional body.
 *
 * KTRACE_REPLAY names such a node by its graph launch (graph_exec,
 * graph_launch: the exec's id and which of its launches, as the trace's
 * graph reference numbers them), its index in the GRAPH record (node) and
 * the run of its body (iteration, outer).  The GPU decides which bodies run
 * and how often, so the node cannot be issued alone from the host.  Instead,
 * when that exec gets a revision (instantiation, update: the program's graph
 * is alive then, and the copy is made from it), ktrace builds its copy of
 * the graph node by node (graph_build.c) with the bodies' run counters and,
 * around the node, a gated copy before it (its buffers into S) and one after
 * it (into R0), both firing in the named run only; their tables hold
 * KT_GBODY_TABLE entries, filled at the launch.  At the named launch the
 * replay module (through the services table) finds the node's buffers, takes
 * scratch for them and fills the tables, the copy runs instead of the
 * program's exec, and after it the replay module replays the node's kernel
 * alone from S against R0 and puts back what the graph left.  When no copy
 * is ready the program's exec runs and the verdict says why.  Either way the
 * graph launch happens exactly once.
 * May call: the real driver (ktrace_real), the services table, the model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashkern/hashkern_abi.h"
#include "interpose/driver/driver_real.h"
#include "interpose/graph/graph_internal.h"
#include "interpose/model/kernels.h"
#include "interpose/model/replay_spec.h"
#include "interpose/model/services.h"

/* Entries of each gated copy's table: as many pointers as a kernel's
 * parameters can hold. */
#define KT_GBODY_TABLE KTRACE_PARAM_MAX_WORDS

struct kt_gbody {
	CUcontext ctx;
	CUgraph g;
	CUgraphExec exec;
	CUdeviceptr area;               /* the run counters, then the tables */
	struct ktrace_replay_gate gate;
	const char *why;                /* no copy: why (static text) */
};

static const struct ktrace_replay_spec *target_spec(void)
{
	const struct ktrace_replay_spec *spec = ktrace_tracer.cfg.replay_spec;

	return spec && spec->body ? spec : NULL;
}

int kt_gbody_target(uint64_t exec_id, uint64_t launch)
{
	const struct ktrace_replay_spec *spec = target_spec();

	return spec && spec->graph_exec == exec_id && spec->graph_launch == launch;
}

/* Why the spec's node of r cannot be replayed, or NULL. */
static const char *node_why(const struct kt_grev *r, const struct ktrace_replay_spec *spec)
{
	const struct kt_gnode *n = spec->node < r->nnodes ? &r->nodes[spec->node] : NULL;
	const struct ktrace_kernel_entry *e;

	if (!n || n->rec.kind != KTRACE_GNODE_KERNEL)
		return "the graph has no kernel node of that index";
	if (r->levels[n->level].run == KT_GRAPH_NONE && spec->iteration != KTRACE_REPLAY_TOP_LEVEL)
		return "the kernel node lies in no conditional body";
	if (r->levels[n->level].run != KT_GRAPH_NONE && spec->iteration == KTRACE_REPLAY_TOP_LEVEL)
		return "the kernel node lies in a conditional body: its iteration must be named";
	e = ktrace_services.kernel_lookup(n->func);
	if (!e || !e->name || strcmp(e->name, spec->kernel) != 0)
		return "the graph's node of that index launches another kernel";
	return NULL;
}

/* The area: r's run counters and outer rings, the two tables, the fired
 * words, zeroed; the top level's counter, 1.  0, or -1 with b->why. */
static int make_area(struct kt_gbody *b, const struct kt_grev *r, uint64_t *counter_words)
{
	size_t table = (size_t)3 * KT_GBODY_TABLE * sizeof(uint64_t);
	uint64_t one = 1;
	size_t bytes;

	*counter_words = (uint64_t)r->nlevels * (1u + r->ring);
	bytes = (size_t)*counter_words * sizeof(uint64_t) + 2 * table + 3 * sizeof(uint64_t);
	if (KT_GCALL(cuMemAlloc_v2, &b->area, bytes) || KT_GCALL(cuMemsetD8_v2, b->area, 0, bytes) ||
	    KT_GCALL(cuMemcpyHtoD_v2, b->area + bytes - sizeof(uint64_t), &one, sizeof(one))) {
		b->why = "no device memory for the copy's run counters and tables";
		return -1;
	}
	b->gate.capacity = KT_GBODY_TABLE;
	b->gate.pre_table = b->area + (CUdeviceptr)*counter_words * sizeof(uint64_t);
	b->gate.post_table = b->gate.pre_table + table;
	b->gate.fired = b->gate.post_table + table;
	b->gate.top_counter = b->gate.fired + 2 * sizeof(uint64_t);
	return 0;
}

/* Build and instantiate the copy of r.  0, or -1 with b->why. */
static int build(struct kt_gbody *b, const struct kt_grev *r, const struct ktrace_replay_spec *spec)
{
	CUgraphNode *map = calloc(r->nnodes + 1, sizeof(*map));
	CUgraph *level_graph = calloc(r->nlevels + 1, sizeof(*level_graph));
	struct kt_gbuild_area a = { 0, 0, 0, r->ring, NULL, &b->gate, spec->node, spec->iteration, spec->outer };
	uint64_t counter_words;
	int rc = -1;

	if (!map || !level_graph)
		b->why = "out of host memory";
	else if (ktrace_services.replay_body_kernels(r->ctx, &b->gate.copy, &b->gate.advance))
		b->why = "ktrace's gated copy kernel could not be loaded";
	else if (make_area(b, r, &counter_words) == 0) {
		a.area = b->area;
		a.advance = b->gate.advance;
		if (kt_gbuild(r, &a, &b->g, map, level_graph))
			b->why = "ktrace's copy of the graph could not be built";
		else if (KT_GCALL(cuGraphInstantiateWithFlags, &b->exec, b->g, 0))
			b->why = "ktrace's copy of the graph could not be instantiated";
		else
			rc = 0;
	}
	free(map);
	free(level_graph);
	return rc;
}

void kt_gbody_free(struct kt_gbody *b)
{
	CUstreamCaptureMode mode;
	int began;

	if (!b)
		return;
	began = ktrace_real_capture_relax(&mode);
	if (b->exec)
		KT_REAL(cuGraphExecDestroy, b->exec);
	if (b->g)
		KT_REAL(cuGraphDestroy, b->g);
	if (b->area)
		KT_REAL(cuMemFree_v2, b->area);
	ktrace_real_capture_restore(mode, began);
	free(b);
}

/* b's copy freed, a body that only says why (NULL out of memory). */
static struct kt_gbody *why_only(struct kt_gbody *b, const char *why)
{
	kt_gbody_free(b);
	b = calloc(1, sizeof(*b));
	if (b)
		b->why = why;
	return b;
}

struct kt_gbody *kt_gbody_drop(struct kt_gbody *b, const char *why)
{
	return b ? why_only(b, why) : NULL;
}

struct kt_gbody *kt_gbody_context_gone(struct kt_gbody *b, CUcontext ctx)
{
	if (!b || b->ctx != ctx)
		return b;
	free(b); /* its graph, exec and memory went with the context */
	return NULL;
}

struct kt_gbody *kt_gbody_revision(struct kt_gbody *old, const struct kt_grev *r, uint64_t exec_id,
				   uint64_t launches)
{
	const struct ktrace_replay_spec *spec = target_spec();
	struct kt_gbody *b;
	int pushed;

	kt_gbody_free(old);
	if (!spec || spec->graph_exec != exec_id || launches > spec->graph_launch || !(b = calloc(1, sizeof(*b))))
		return NULL;
	b->ctx = r->ctx;
	b->why = node_why(r, spec);
	if (b->why)
		return b;
	pushed = ktrace_real_ctx_push(r->ctx);
	if (build(b, r, spec))
		b = why_only(b, b->why);
	ktrace_real_ctx_pop(pushed);
	return b;
}

CUresult kt_gbody_launch(struct kt_gbody *b, const struct kt_grev *r, CUgraphExec program_exec, CUstream s,
			 ktrace_real_graph_launch_fn real, void *ctx, uint64_t seq)
{
	const struct ktrace_replay_spec *spec = target_spec();
	const char *why = !b ? "ktrace holds no copy of the graph for it (an exec instantiated before tracing, or "
			       "its context destroyed)" : b->why;
	struct ktrace_replay_body *rb;
	struct kt_gnode_call c;
	int ready = 0;
	char text[256];
	CUresult res, copy_res = CUDA_SUCCESS;

	if (!why && kt_gnode_call_init(&c, &r->nodes[spec->node], s))
		why = "out of host memory";
	if (why) {
		snprintf(text, sizeof(text), "replay: node %u of graph exec %llu cannot be replayed: %s", spec->node,
			 (unsigned long long)r->exec_id, why);
		ktrace_tracer_note(KTRACE_NOTE_WARN, KTRACE_NOTE_CODE_REPLAY, text);
		return real(program_exec, ctx);
	}
	rb = ktrace_services.replay_body_begin(&c.a, kt_gnode_real_launch, r->ctx, &b->gate, &ready);
	res = real(ready ? b->exec : program_exec, ctx);
	if (ready && res != CUDA_SUCCESS) {
		/* the copy did not start: the program's exec runs as it would have */
		copy_res = res;
		res = real(program_exec, ctx);
	}
	ktrace_services.replay_body_end(rb, seq, res, copy_res);
	kt_gnode_call_free(&c);
	return res;
}
