/* interpose/replay/replay_body.c: confirming a kernel node inside a
 * conditional body of a CUDA graph, or at the top level of a graph that
 * holds conditional nodes (KTRACE_REPLAY with graph_exec, graph_launch,
 * node and, for a body's node, iteration).
 *
 * Owns the replay's side of such a graph launch (the graph module builds
 * and launches ktrace's copy of the graph, interpose/graph/graph_body.c,
 * with the gated copy kernels of the context's one module of ktrace's
 * kernels, interpose/hash/hash_module.c); before the launch, the buffers the
 * node can reach (the launch path's finding, replay_launch.c), device
 * scratch S and R0 for each within the spec's budget and the tables of the
 * two gated copies filled (hashkern/hashkern_abi.h: the buffers into S
 * before the node, into R0 after it, in the named run of the body only);
 * after it, synchronised, whether both copies fired, the confirmation from
 * S and R0 (ktrace_replay_confirm_taken: the node's kernel alone, K times,
 * the graph's final contents put back) and the verdict as for any launch.
 * Other threads' traced launches wait meanwhile.  Any failure is
 * NOT_REPLAYABLE with its reason; the program's graph launch runs once
 * either way (ktrace's copy of it, or its own exec).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/driver/driver_real.h"
#include "interpose/model/kernels.h"
#include "interpose/model/services.h"
#include "interpose/model/tracer.h"
#include "interpose/replay/replay_internal.h"

struct ktrace_replay_body {
	const struct ktrace_launch_args *a;
	ktrace_real_launch_fn real;
	CUcontext ctx;
	struct ktrace_replay_launch launch;
	struct rp_reach reach;
	CUdeviceptr *input, *result;    /* S and R0 per buffer */
	CUdeviceptr fired;              /* the gate's u64[2] */
	uint64_t scratch_bytes;
	uint64_t kernel_id;
	struct ktrace_replay_report report;     /* the verdict */
	char failed[160];               /* why nothing can be taken, or "" */
	uint8_t reason;
	int held;                       /* other threads' launches held back */
	int quiet;                      /* a fork child's: no verdict */
};

static CUresult launch_alone(void *arg)
{
	struct ktrace_replay_body *b = arg;

	return b->real(b->a, NULL);
}

static int body_fail(struct ktrace_replay_body *b, enum ktrace_replay_reason reason, const char *what, CUresult res)
{
	char eb[32] = "";

	if (res != CUDA_SUCCESS)
		snprintf(eb, sizeof(eb), ": CUresult %d", (int)res);
	snprintf(b->failed, sizeof(b->failed), "%s%s", what, eb);
	b->reason = (uint8_t)reason;
	return -1;
}

/* S and R0 on the device within the budget, and the gate's tables
 * written (entries past the buffers stay zero).  0 or -1. */
static int take_scratch(struct ktrace_replay_body *b, const struct ktrace_replay_gate *g, uint64_t budget)
{
	uint32_t n = b->reach.n;
	uint64_t *pre = calloc((size_t)3 * n + 1, sizeof(uint64_t));
	uint64_t *post = calloc((size_t)3 * n + 1, sizeof(uint64_t));
	uint64_t zero[2] = { 0, 0 };
	CUresult res = CUDA_SUCCESS;
	int rc = -1;

	b->input = calloc(n, sizeof(CUdeviceptr));
	b->result = calloc(n, sizeof(CUdeviceptr));
	if (!pre || !post || !b->input || !b->result) {
		body_fail(b, KTRACE_REPLAY_OUT_OF_MEMORY, "no host memory for the tables", CUDA_SUCCESS);
		goto out;
	}
	if (n > g->capacity) {
		body_fail(b, KTRACE_REPLAY_GRAPH_NOT_BUILT,
			  "the kernel reaches more buffers than the gated copies hold", CUDA_SUCCESS);
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct ktrace_replay_buffer *v = &b->reach.v[i];

		if (!v->size) {
			body_fail(b, KTRACE_REPLAY_UNKNOWN_EXTENT, "a buffer has no known extent", CUDA_SUCCESS);
			goto out;
		}
		b->scratch_bytes += 2 * v->size;
		if (b->scratch_bytes > budget) {
			body_fail(b, KTRACE_REPLAY_OUT_OF_MEMORY, "the copies S and R0 exceed the device budget",
				  CUDA_SUCCESS);
			goto out;
		}
		if ((res = KT_REAL(cuMemAlloc_v2, &b->input[i], v->size)) != CUDA_SUCCESS ||
		    (res = KT_REAL(cuMemAlloc_v2, &b->result[i], v->size)) != CUDA_SUCCESS) {
			body_fail(b, KTRACE_REPLAY_OUT_OF_MEMORY, "cuMemAlloc_v2 of a copy failed", res);
			goto out;
		}
		pre[3 * i] = post[3 * i] = v->base;
		pre[3 * i + 1] = b->input[i];
		post[3 * i + 1] = b->result[i];
		pre[3 * i + 2] = post[3 * i + 2] = v->size;
	}
	if ((res = KT_REAL(cuMemcpyHtoD_v2, g->pre_table, pre, (size_t)3 * n * 8)) != CUDA_SUCCESS ||
	    (res = KT_REAL(cuMemcpyHtoD_v2, g->post_table, post, (size_t)3 * n * 8)) != CUDA_SUCCESS ||
	    (res = KT_REAL(cuMemcpyHtoD_v2, g->fired, zero, sizeof(zero))) != CUDA_SUCCESS) {
		body_fail(b, KTRACE_REPLAY_COPY_FAILED, "the gated copies' tables could not be written", res);
		goto out;
	}
	b->fired = g->fired;
	rc = 0;
out:
	free(pre);
	free(post);
	return rc;
}

struct ktrace_replay_body *ktrace_replay_body_begin(const struct ktrace_launch_args *a, ktrace_real_launch_fn real,
						    CUcontext ctx, const struct ktrace_replay_gate *gate, int *ready)
{
	struct ktrace_replay_body *b = calloc(1, sizeof(*b));
	const struct ktrace_replay_spec *spec = ktrace_tracer.cfg.replay_spec;
	struct ktrace_kernel_entry *e = ktrace_services.kernel_lookup((uint64_t)(uintptr_t)a->f);

	*ready = 0;
	if (!b)
		return NULL;
	b->a = a;
	b->real = real;
	b->ctx = ctx;
	b->kernel_id = e ? e->id : 0;
	b->launch = (struct ktrace_replay_launch){ .fn = launch_alone, .arg = b, .stream = a->stream, .ctx = ctx,
						   .kernel = e && e->name ? e->name : spec->kernel,
						   .occurrence = spec->occurrence };
	if (!rp_owner_process()) {
		b->quiet = 1; /* a fork child confirms nothing, as for any launch */
		return b;
	}
	rp_hold_others();
	b->held = 1;
	if (rp_reach_find(&b->reach, a, e))
		body_fail(b, KTRACE_REPLAY_OUT_OF_MEMORY, "no host memory for the buffers", CUDA_SUCCESS);
	else if (!b->reach.n)
		body_fail(b, KTRACE_REPLAY_NO_BUFFERS, "the kernel reaches no known buffer", CUDA_SUCCESS);
	else if (take_scratch(b, gate, spec->budget) == 0)
		*ready = 1;
	return b;
}

/* A verdict without replays: NOT_REPLAYABLE for reason. */
static void report_failed(struct ktrace_replay_body *b, uint8_t reason, const char *detail, CUresult graph_result)
{
	struct ktrace_replay_report *r = &b->report;
	const struct ktrace_replay_spec *spec = ktrace_tracer.cfg.replay_spec;

	memset(r, 0, sizeof(*r));
	r->outcome = KTRACE_REPLAY_NOT_REPLAYABLE;
	r->reason = reason;
	r->launch_result = (int32_t)graph_result;
	r->runs_requested = spec->runs;
	r->occurrence = b->launch.occurrence;
	r->kernel = b->launch.kernel ? strdup(b->launch.kernel) : NULL;
	snprintf(r->detail, sizeof(r->detail), "%s", detail);
}

/* Did both gated copies fire?  1 yes, 0 no, -1 unknown (*res says why). */
static int gates_fired(struct ktrace_replay_body *b, CUresult *res)
{
	uint64_t fired[2] = { 0, 0 };

	if ((*res = KT_REAL(cuCtxSynchronize)) != CUDA_SUCCESS ||
	    (*res = KT_REAL(cuMemcpyDtoH_v2, fired, b->fired, sizeof(fired))) != CUDA_SUCCESS)
		return -1;
	return fired[0] && fired[1];
}

/* The confirmation of a graph launch whose gated copies ran. */
static void confirm(struct ktrace_replay_body *b, CUresult graph_result)
{
	const struct ktrace_replay_spec *spec = ktrace_tracer.cfg.replay_spec;
	struct ktrace_replay_opts o = { spec->runs, spec->budget, spec->host_budget };
	struct ktrace_replay_taken t = { b->input, b->result, b->scratch_bytes, graph_result };
	char why[160];
	CUresult res;
	int fired = gates_fired(b, &res);

	if (fired < 0) {
		snprintf(why, sizeof(why), "synchronising after the graph launch failed: CUresult %d", (int)res);
		report_failed(b, KTRACE_REPLAY_SYNC_FAILED, why, graph_result);
	} else if (!fired && spec->iteration == KTRACE_REPLAY_TOP_LEVEL) {
		snprintf(why, sizeof(why), "the node did not run in graph launch %llu of exec %llu",
			 (unsigned long long)spec->graph_launch, (unsigned long long)spec->graph_exec);
		report_failed(b, KTRACE_REPLAY_NOT_REACHED, why, graph_result);
	} else if (!fired) {
		snprintf(why, sizeof(why), "iteration %u of the body did not run in graph launch %llu of exec %llu",
			 spec->iteration, (unsigned long long)spec->graph_launch, (unsigned long long)spec->graph_exec);
		report_failed(b, KTRACE_REPLAY_NOT_REACHED, why, graph_result);
	} else {
		ktrace_replay_confirm_taken(&b->launch, b->reach.v, b->reach.n, &o, &t, &b->report);
	}
}

static const char *copy_failed(CUresult res, char *buf, size_t len)
{
	snprintf(buf, len, "ktrace's copy of the graph failed to launch (CUresult %d): the program's exec ran instead",
		 (int)res);
	return buf;
}

static void body_free(struct ktrace_replay_body *b)
{
	for (uint32_t i = 0; b->input && i < b->reach.n; i++) {
		if (b->input[i])
			KT_REAL(cuMemFree_v2, b->input[i]);
		if (b->result[i])
			KT_REAL(cuMemFree_v2, b->result[i]);
	}
	free(b->input);
	free(b->result);
	rp_reach_free(&b->reach);
	ktrace_replay_report_free(&b->report);
	free(b);
}

void ktrace_replay_body_end(struct ktrace_replay_body *b, uint64_t seq, CUresult graph_result, CUresult copy_result)
{
	const struct ktrace_replay_spec *spec = ktrace_tracer.cfg.replay_spec;
	int pushed = 0, held;
	char why[160];

	if (!b)
		return;
	if (b->quiet) {
		free(b);
		return;
	}
	pushed = ktrace_real_ctx_push(b->ctx);
	if (b->failed[0])
		report_failed(b, b->reason, b->failed, graph_result);
	else if (copy_result != CUDA_SUCCESS)
		report_failed(b, KTRACE_REPLAY_GRAPH_NOT_BUILT, copy_failed(copy_result, why, sizeof(why)),
			      graph_result);
	else if (graph_result != CUDA_SUCCESS)
		report_failed(b, KTRACE_REPLAY_LAUNCH_FAILED, "the graph launch failed", graph_result);
	else
		confirm(b, graph_result);
	if (spec->iteration != KTRACE_REPLAY_TOP_LEVEL) { /* a top-level node's report is a launch's */
		b->report.body = 1;
		b->report.iteration = spec->iteration;
		b->report.outer_iteration = spec->outer;
	}
	rp_write_verdict(seq, b->kernel_id, &b->report);
	held = b->held;
	body_free(b);
	ktrace_real_ctx_pop(pushed);
	if (held)
		rp_release_others();
}
