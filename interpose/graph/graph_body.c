/* interpose/graph/graph_body.c: a replay run's launch of the graph that
 * holds the kernel node to confirm inside a conditional body.
 *
 * KTRACE_REPLAY names such a node by its graph launch (graph_exec,
 * graph_launch: the exec's id and which of its launches, as the trace's
 * graph reference numbers them), its index in the GRAPH record (node) and
 * the run of its body (iteration, outer).  The GPU decides which bodies run
 * and how often, so the node cannot be issued alone from the host; instead
 * that one graph launch runs ktrace's copy of the graph, built node by node
 * (graph_build.c) with the run counters of the bodies and, around the node, a
 * gated copy before it (its buffers into S) and one after it (into R0), both
 * firing in the named run only.  The replay module (through the services
 * table) finds the buffers, owns the scratch, and after the launch replays
 * the node's kernel alone from S against R0 and puts back what the graph
 * left.  When no copy can be built the program's exec runs and the verdict
 * says why.  Either way the graph launch happens exactly once.
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

int kt_gbody_target(uint64_t exec_id, uint64_t launch)
{
	const struct ktrace_replay_spec *spec = ktrace_tracer.cfg.replay_spec;

	return spec && spec->body && spec->graph_exec == exec_id && spec->graph_launch == launch;
}

/* Why the spec's node of r cannot be replayed, or NULL. */
static const char *node_why(const struct kt_grev *r, const struct ktrace_replay_spec *spec)
{
	const struct kt_gnode *n = spec->node < r->nnodes ? &r->nodes[spec->node] : NULL;
	const struct ktrace_kernel_entry *e;

	if (!n || n->rec.kind != KTRACE_GNODE_KERNEL)
		return "the graph has no kernel node of that index";
	if (r->levels[n->level].run == KT_GRAPH_NONE)
		return "the kernel node lies in no conditional body";
	e = ktrace_services.kernel_lookup(n->func);
	if (!e || !e->name || strcmp(e->name, spec->kernel) != 0)
		return "the graph's node of that index launches another kernel";
	return NULL;
}

/* ktrace's copy of r with the gate, instantiated into *exec.  NULL, or why not. */
static const char *build(const struct kt_grev *r, const struct ktrace_replay_gate *gate, CUdeviceptr area,
			 CUgraph *g, CUgraphExec *exec)
{
	const struct ktrace_replay_spec *spec = ktrace_tracer.cfg.replay_spec;
	struct kt_gbuild_area a = { area, 0, 0, r->ring, gate->advance, gate, spec->node, spec->iteration,
				    spec->outer };
	CUgraphNode *map = calloc(r->nnodes + 1, sizeof(*map));
	CUgraph *level_graph = calloc(r->nlevels + 1, sizeof(*level_graph));
	const char *why = NULL;

	*g = NULL;
	*exec = NULL;
	if (!map || !level_graph)
		why = "out of host memory";
	else if (kt_gbuild(r, &a, g, map, level_graph))
		why = "ktrace's copy of the graph could not be built";
	else if (KT_GCALL(cuGraphInstantiateWithFlags, exec, *g, 0))
		why = "ktrace's copy of the graph could not be instantiated";
	free(map);
	free(level_graph);
	return why;
}

/* The launch with the gated copies, when everything is there (*not_built
 * says why not: then the program's exec ran). */
static CUresult launch_gated(const struct kt_grev *r, const struct ktrace_replay_gate *gate,
			     CUgraphExec program_exec, ktrace_real_graph_launch_fn real, void *ctx,
			     const char **not_built)
{
	size_t bytes = (size_t)r->nlevels * (1u + r->ring) * sizeof(uint64_t);
	CUdeviceptr area = 0;
	CUgraphExec exec = NULL;
	CUgraph g = NULL;
	CUstreamCaptureMode mode;
	int began;
	CUresult res;

	began = kt_graph_calls_begin(&mode);
	*not_built = NULL;
	if (!gate->n)
		*not_built = "no gated copies";     /* the replay's own reason is reported */
	else if (KT_GCALL(cuMemAlloc_v2, &area, bytes))
		*not_built = "no device memory for the bodies' run counters";
	else
		*not_built = build(r, gate, area, &g, &exec);
	kt_graph_calls_end(&mode, began);
	res = real(*not_built ? program_exec : exec, ctx);
	began = kt_graph_calls_begin(&mode);
	if (exec) {
		KT_REAL(cuCtxSynchronize); /* the copy's launch done before it goes */
		KT_REAL(cuGraphExecDestroy, exec);
	}
	if (g)
		KT_REAL(cuGraphDestroy, g);
	if (area)
		KT_REAL(cuMemFree_v2, area);
	kt_graph_calls_end(&mode, began);
	return res;
}

CUresult kt_gbody_launch(const struct kt_grev *r, CUgraphExec program_exec, CUstream s,
			 ktrace_real_graph_launch_fn real, void *ctx, uint64_t seq)
{
	const struct ktrace_replay_spec *spec = ktrace_tracer.cfg.replay_spec;
	const char *why = node_why(r, spec), *not_built = NULL;
	struct ktrace_replay_gate gate;
	struct ktrace_replay_body *b;
	struct kt_gnode_call c;
	char text[256];
	CUresult res;

	if (why || kt_gnode_call_init(&c, &r->nodes[spec->node], s)) {
		snprintf(text, sizeof(text), "replay: node %u of graph exec %llu cannot be replayed: %s", spec->node,
			 (unsigned long long)r->exec_id, why ? why : "out of host memory");
		ktrace_tracer_note(KTRACE_NOTE_WARN, KTRACE_NOTE_CODE_REPLAY, text);
		return real(program_exec, ctx);
	}
	b = ktrace_services.replay_body_begin(&c.a, kt_gnode_real_launch, r->ctx, &gate);
	res = launch_gated(r, &gate, program_exec, real, ctx, &not_built);
	ktrace_services.replay_body_end(b, seq, res, gate.n ? not_built : NULL);
	kt_gnode_call_free(&c);
	return res;
}
