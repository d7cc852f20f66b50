/* test/unit/graph_test.c: CUDA graphs end to end on the CPU.
 *
 * build/graph_app (test/unit/graph_app.c) runs under LD_PRELOAD=libktrace.so
 * with the fake driver's real-memory build (build/fakecuda-real, its graph
 * API in test/fakecuda/fakegraph.c), and its traces must say:
 *  - explicit graphs: one GRAPH record per revision (instantiation, node
 *    parameters set on the exec, exec update, a node disabled) with the
 *    nodes (a child graph's after it), their kinds and the edges among the
 *    nodes that run; per graph launch one LAUNCH per kernel node, one
 *    MEMCPY / MEMSET per copy / memset node, numbered in one block, with the
 *    graph reference; node parameter updates and exec updates reflected;
 *    with hashing, the digests the GPU would give (the CPU reference of the
 *    buffers before and after each node);
 *  - changes between launches that ktrace's copy follows by updating itself
 *    in place: a node disabled and enabled again runs again, a kernel node
 *    whose regions shrink and grow again is hashed with zeroed scratch, and
 *    a copy that changes shape leaves no driver failure for a later NOTE;
 *  - stream capture: no LAUNCH record for the launches captured (counted),
 *    the graph's nodes and launches recorded as above;
 *  - the diff on graph traces: a non-deterministic node inside a graph is
 *    the first divergence with its inputs identical, a deterministic graph
 *    compares identical, and two nodes no edge orders that write the same
 *    buffer are a possible race whose digests are set aside;
 *  - graphs ktrace cannot hash (memory allocation and free nodes) run as
 *    the program made them: their nodes recorded unhashed, a NOTE naming
 *    the reason, counted by the diff, --strict failing on them; a
 *    conditional graph beside them is copied and hashed (its bodies:
 *    graph_cond_test.c);
 *  - ktrace-dump --json shows graph launches as launches with api "graph"
 *    and a "graph" member;
 *  - `ktrace check` confirms the non-deterministic node by replay (the
 *    replay run launches the graph node by node).
 */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "hashkern/ktrace_digest.h"
#include "test/unit/graph_trace.h"

/* ---- explicit graphs --------------------------------------------------------------------------- */

/* Graph A as graph_app builds it: kernel -> memcpy -> child { kernel } ->
 * memset, the memcpy also before the memset. */
static void check_graph_a(const struct ktrace_rec_graph *g, uint32_t cause)
{
	struct ktrace_graph_node v[5];
	static const uint16_t kinds[5] = { KTRACE_GNODE_KERNEL, KTRACE_GNODE_MEMCPY, KTRACE_GNODE_CHILD,
					   KTRACE_GNODE_KERNEL, KTRACE_GNODE_MEMSET };
	static const struct ktrace_graph_edge edges[4] = { { 0, 1 }, { 1, 3 }, { 1, 4 }, { 3, 4 } };

	assert_int_equal(g->cause, cause);
	assert_int_equal(g->nnodes, 5);
	assert_int_equal(g->nodes_total, 5);
	assert_int_equal(g->untraced, KTRACE_GRAPH_TRACED);
	gt_graph_nodes(g, v);
	for (int i = 0; i < 5; i++)
		assert_int_equal(v[i].kind, kinds[i]);
	assert_int_equal(v[3].parent, 2);
	assert_int_equal(v[0].parent, KTRACE_GRAPH_NO_PARENT);
	assert_true(v[0].flags & KTRACE_GNODEF_RECORDED);
	assert_false(v[2].flags & KTRACE_GNODEF_RECORDED);
	assert_int_equal(v[0].param_bytes_len, 12);
	assert_int_equal(v[1].dir, KTRACE_COPY_DTOD);
	assert_int_equal(v[1].bytes, N * sizeof(float));
	assert_int_equal(v[4].elem_size, 4);
	assert_int_equal(v[4].count, N);
	assert_int_equal(g->nedges, 4);
	for (int i = 0; i < 4; i++) {
		struct ktrace_graph_edge e;
		ktrace_graph_edge_get(g, (uint32_t)i, &e);
		assert_int_equal(e.from, edges[i].from);
		assert_int_equal(e.to, edges[i].to);
	}
}

static uint64_t param_u64(const struct ktrace_rec_launch *l, uint32_t off)
{
	uint64_t v;
	memcpy(&v, l->param_bytes + off, sizeof v);
	return v;
}

static int32_t param_i32(const struct ktrace_rec_launch *l, uint32_t off)
{
	int32_t v;
	memcpy(&v, l->param_bytes + off, sizeof v);
	return v;
}

/* Revisions, records per launch, numbering, updates reflected. */
static void check_explicit(const struct recs *x)
{
	struct ktrace_rec_graph g;
	struct ktrace_graph_node v[5];
	struct ktrace_rec_launch l, l0;

	gt_graph_rev(x, 0, &g);
	check_graph_a(&g, KTRACE_GRAPH_INSTANTIATE);
	gt_graph_rev(x, 1, &g);
	check_graph_a(&g, KTRACE_GRAPH_NODE_UPDATE);
	gt_graph_rev(x, 2, &g);
	check_graph_a(&g, KTRACE_GRAPH_EXEC_UPDATE);
	gt_graph_rev(x, 3, &g);
	check_graph_a(&g, KTRACE_GRAPH_NODE_UPDATE);
	gt_graph_nodes(&g, v);
	assert_true(v[4].flags & KTRACE_GNODEF_DISABLED);
	assert_false(v[4].flags & KTRACE_GNODEF_RECORDED);
	/* 6 launches of 2 kernel nodes and a memcpy node; the memset in 5 of them */
	assert_int_equal(gt_count_type(x, KTRACE_REC_LAUNCH, 1), 12);
	assert_int_equal(gt_count_type(x, KTRACE_REC_LAUNCH, 0), 12);
	assert_int_equal(gt_count_type(x, KTRACE_REC_MEMCPY, 1), 6);
	assert_int_equal(gt_count_type(x, KTRACE_REC_MEMSET, 1), 5);
	assert_int_equal(x->counters[KTRACE_CTR_GRAPH_LAUNCHES], 6);
	for (uint64_t k = 0; k < 6; k++) {
		assert_true(gt_graph_launch(x, k, 0, &l));
		assert_int_equal(l.api, KTRACE_API_GRAPH);
		assert_int_equal(l.launch_seq, l.graph.launch_seq);     /* first in its block */
		assert_int_equal(l.graph.revision, k < 3 ? 0 : k - 2);
		assert_true(gt_graph_launch(x, k, 3, &l));
		assert_int_equal(l.launch_seq, l.graph.launch_seq + 2); /* kernel, memcpy, then the child's kernel */
	}
	assert_true(gt_graph_launch(x, 0, 0, &l0));
	assert_true(gt_graph_launch(x, 3, 0, &l));
	assert_int_equal(param_i32(&l0, 8), N);
	assert_int_equal(param_i32(&l, 8), 16);                /* set on the exec */
	assert_true(param_u64(&l, 0) == param_u64(&l0, 0));
	assert_true(gt_graph_launch(x, 4, 0, &l));
	assert_true(param_u64(&l, 0) != param_u64(&l0, 0));      /* the exec update's x2 */
	assert_int_equal(param_i32(&l, 8), N);
}

static void test_explicit_metadata(void **state)
{
	struct recs x;

	(void)state;
	gt_run_app("explicit", "explicit0.ktrace", 0, 0);
	gt_read_recs("explicit0.ktrace", &x);
	check_explicit(&x);
	gt_free_recs(&x);
}


/* With hashing: each kernel node's digests are the CPU reference's of its
 * buffer before and after it. */
static void test_explicit_hashed(void **state)
{
	struct recs x;
	struct ktrace_rec_launch l;
	struct ktrace_region g;

	(void)state;
	gt_run_app("explicit", "explicit1.ktrace", 1, 0);
	gt_read_recs("explicit1.ktrace", &x);
	check_explicit(&x);
	for (int k = 0; k < 3; k++) {
		/* node 0: add_one(x), x = 0.. + k before */
		assert_true(gt_graph_launch(&x, (uint64_t)k, 0, &l));
		assert_true(l.flags & KTRACE_LAUNCHF_HASHED);
		ktrace_launch_region(&l, 0, &g);
		assert_true((g.flags & KTRACE_REGIONF_PRE) && (g.flags & KTRACE_REGIONF_POST));
		assert_true(g.pre_hash == gt_floats_digest(0, (float)k, N, 0));
		assert_true(g.post_hash == gt_floats_digest(0, (float)k + 1, N, 0));
		/* node 3: add_one(y) after y = x */
		assert_true(gt_graph_launch(&x, (uint64_t)k, 3, &l));
		ktrace_launch_region(&l, 0, &g);
		assert_true(g.pre_hash == gt_floats_digest(0, (float)k + 1, N, 0));
		assert_true(g.post_hash == gt_floats_digest(0, (float)k + 2, N, 0));
	}
	/* launch 3: n = 16 on the exec: only the first 16 grow */
	assert_true(gt_graph_launch(&x, 3, 0, &l));
	ktrace_launch_region(&l, 0, &g);
	assert_true(g.post_hash == gt_floats_digest(0, 4, 16, 3));
	/* launch 4: the exec update's x2 (1000 + i) */
	assert_true(gt_graph_launch(&x, 4, 0, &l));
	ktrace_launch_region(&l, 0, &g);
	assert_true(g.pre_hash == gt_floats_digest(1000, 0, N, 0));
	assert_true(g.post_hash == gt_floats_digest(1000, 1, N, 0));
	gt_free_recs(&x);
}

/* ---- stream capture ------------------------------------------------------------------------------ */

static void test_capture(void **state)
{
	struct recs x;
	struct ktrace_rec_graph g;
	struct ktrace_graph_node v[3];
	struct ktrace_rec_launch l;
	struct ktrace_region r;

	(void)state;
	gt_run_app("capture", "capture.ktrace", 1, 0);
	gt_read_recs("capture.ktrace", &x);
	/* the captured launches and memset ran nowhere: counted, not recorded */
	assert_int_equal(x.counters[KTRACE_CTR_LAUNCHES_CAPTURED], 3);
	assert_int_equal(gt_count_type(&x, KTRACE_REC_LAUNCH, 0), gt_count_type(&x, KTRACE_REC_LAUNCH, 1));
	gt_graph_rev(&x, 0, &g);
	assert_int_equal(g.nnodes, 3);
	gt_graph_nodes(&g, v);
	assert_int_equal(v[0].kind, KTRACE_GNODE_KERNEL);
	assert_int_equal(v[1].kind, KTRACE_GNODE_KERNEL);
	assert_int_equal(v[2].kind, KTRACE_GNODE_MEMSET);
	assert_int_equal(v[2].value, 5);
	assert_int_equal(g.nedges, 2);
	assert_int_equal(gt_count_type(&x, KTRACE_REC_LAUNCH, 1), 4);
	assert_int_equal(gt_count_type(&x, KTRACE_REC_MEMSET, 1), 2);
	assert_int_equal(gt_count_type(&x, KTRACE_REC_MEMSET, 0), 2);
	/* the second launch's second node: x was incremented three times before it */
	assert_true(gt_graph_launch(&x, 1, 1, &l));
	ktrace_launch_region(&l, 0, &r);
	assert_true(r.pre_hash == gt_floats_digest(0, 3, N, 0));
	assert_true(r.post_hash == gt_floats_digest(0, 4, N, 0));
	assert_true(l.stream != 0);
	gt_free_recs(&x);
}

/* ---- the diff ------------------------------------------------------------------------------------- */

/* A non-deterministic node inside a graph is the first divergence, its
 * inputs identical; the same graph without it compares identical. */
static void test_diff_nondet_node(void **state)
{
	struct tm_trace a, b;
	struct diff_result r;

	(void)state;
	gt_run_app("nondet", "nondet1.ktrace", 1, 1);
	gt_run_app("nondet", "nondet2.ktrace", 1, 2);
	gt_compare("nondet1.ktrace", "nondet2.ktrace", &a, &b, &r);
	assert_int_equal(r.status, 1);
	assert_true(r.ndivs >= 1);
	assert_string_equal(ktrace_tm_kernel_name(r.divs[0].la->look->kernel), "fake_nondet_sum");
	assert_int_equal(r.divs[0].cls, DIFF_CLASS_KERNEL_NONDET);
	assert_true(r.divs[0].la->flags & KTRACE_LAUNCHF_GRAPH);
	assert_int_equal(r.graphs_a.execs, 1);
	assert_int_equal(r.graphs_a.untraced, 0);
	ktrace_diff_result_free(&r);
	ktrace_tm_free(&a);
	ktrace_tm_free(&b);

	gt_run_app("same", "same1.ktrace", 1, 1);
	gt_run_app("same", "same2.ktrace", 1, 2);
	gt_compare("same1.ktrace", "same2.ktrace", &a, &b, &r);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.ndivs, 0);
	assert_int_equal(r.matched, 6);
	assert_int_equal(r.unverified, 0);
	ktrace_diff_result_free(&r);
	ktrace_tm_free(&a);
	ktrace_tm_free(&b);
}

/* Two nodes of one graph launch that no edge orders, both writing x: their
 * digests are set aside and the pair is a possible race. */
static void test_diff_unordered_nodes(void **state)
{
	struct tm_trace a, b;
	struct diff_result r;

	(void)state;
	gt_run_app("race", "race1.ktrace", 1, 0);
	gt_run_app("race", "race2.ktrace", 1, 0);
	gt_compare("race1.ktrace", "race2.ktrace", &a, &b, &r);
	assert_int_equal(r.races_a, 1);
	assert_int_equal(r.races_b, 1);
	assert_true(r.set_aside >= 2);
	assert_int_equal(r.ndivs, 0);
	ktrace_diff_result_free(&r);
	ktrace_tm_free(&a);
	ktrace_tm_free(&b);
}

/* ---- graphs ktrace cannot hash ------------------------------------------------------------------ */


/* A graph of memory nodes: run as the program made it, its nodes recorded
 * unhashed, a NOTE, counted by the diff; --strict fails on it.  Beside it
 * a conditional graph, which the driver does not clone either: ktrace
 * builds its copy, hashed, and an exec update is followed by describing
 * the program's new graph. */
static void test_untraced(void **state)
{
	struct recs x;
	struct ktrace_rec_graph g;
	struct ktrace_rec_launch l, l0;
	struct tm_trace a, b;
	struct diff_result r;
	uint32_t why[3] = { 0, 0, 0 };
	unsigned ngraphs = 0;

	(void)state;
	gt_run_app("untraced", "untraced1.ktrace", 1, 0);
	gt_run_app("untraced", "untraced2.ktrace", 1, 0);
	gt_read_recs("untraced1.ktrace", &x);
	for (size_t i = 0; i < x.n; i++)
		if (x.type[i] == KTRACE_REC_GRAPH && !ktrace_decode_graph(x.rec[i], x.len[i], &g)) {
			assert_true(ngraphs < 3);
			assert_int_equal((g.flags & KTRACE_GRAPHF_HASHED) != 0, ngraphs != 1);
			why[ngraphs++] = g.untraced;
		}
	assert_int_equal(ngraphs, 3);
	assert_int_equal(why[0], KTRACE_GRAPH_TRACED);
	assert_int_equal(why[1], KTRACE_GRAPH_UNTRACED_MEMORY_NODES);
	assert_int_equal(why[2], KTRACE_GRAPH_TRACED); /* the exec update's revision */
	assert_int_equal(gt_count_graph_notes(&x, NULL), 1);
	/* both kernel nodes of the conditional graph (3 launches), the one between the memory nodes (2) */
	assert_int_equal(gt_count_type(&x, KTRACE_REC_LAUNCH, 1), 8);
	assert_true(gt_graph_launch(&x, 0, 0, &l));
	assert_true(l.flags & KTRACE_LAUNCHF_HASHED);
	assert_true(gt_graph_launch(&x, 0, 0, &l0));
	assert_true(gt_graph_launch(&x, 2, 0, &l));               /* after the update: on x2 */
	assert_int_equal(l.graph.exec_id, l0.graph.exec_id);
	assert_int_equal(l.graph.revision, 1);
	assert_true(param_u64(&l, 0) != param_u64(&l0, 0));
	assert_int_equal(x.counters[KTRACE_CTR_GRAPH_LAUNCHES], 5);
	assert_int_equal(x.counters[KTRACE_CTR_GRAPH_LAUNCHES_UNHASHED], 2);
	gt_free_recs(&x);

	gt_compare_with("untraced1.ktrace", "untraced2.ktrace", &a, &b, &r, 0);
	assert_int_equal(r.graphs_a.execs, 2);
	assert_int_equal(r.graphs_a.untraced, 1);
	assert_int_equal(r.graphs_a.why[KTRACE_GRAPH_UNTRACED_MEMORY_NODES], 1);
	assert_int_equal(r.status, 0);
	{
		/* unverified graph nodes say why their graph is not hashed */
		char text[512];
		unsigned said = 0;

		for (size_t i = 0; i < r.nunv; i++) {
			ktrace_diff_unverified_str(&r.unv[i], text, sizeof text);
			said += strstr(text, "its graph is not hashed: memory_nodes") != NULL;
		}
		assert_true(said > 0);
	}
	ktrace_diff_result_free(&r);
	ktrace_tm_free(&a);
	ktrace_tm_free(&b);
	gt_compare_with("untraced1.ktrace", "untraced2.ktrace", &a, &b, &r, 1);
	assert_int_equal(r.status, 1);
	ktrace_diff_result_free(&r);
	ktrace_tm_free(&a);
	ktrace_tm_free(&b);
}

/* A graph ktrace cannot instrument (the driver refuses its checksum kernel
 * nodes): the program's graph runs, recorded unhashed, and the NOTE names
 * the driver call that failed and its result. */
static void test_instrument_failure_named(void **state)
{
	struct recs x;
	struct ktrace_rec_graph g;
	struct ktrace_rec_launch l;

	(void)state;
	gt_extra_env = "FAKECUDA_GRAPH_REFUSE_HASH_NODES=1";
	gt_run_app("explicit", "refused.ktrace", 1, 0);
	gt_extra_env = "KTRACE_QUIET=1";
	gt_read_recs("refused.ktrace", &x);
	for (size_t i = 0; i < x.n; i++)
		if (x.type[i] == KTRACE_REC_GRAPH && !ktrace_decode_graph(x.rec[i], x.len[i], &g)) {
			assert_false(g.flags & KTRACE_GRAPHF_HASHED);
			assert_int_equal(g.untraced, KTRACE_GRAPH_UNTRACED_DRIVER);
		}
	assert_int_equal(gt_count_graph_notes(&x, "(driver_error) (cuGraphAddKernelNode_v2 returned "
					       "CUDA_ERROR_INVALID_VALUE)"), 1);
	assert_true(gt_graph_launch(&x, 0, 0, &l));
	assert_false(l.flags & KTRACE_LAUNCHF_HASHED);
	gt_free_recs(&x);
}

/* A copy inside a child graph set on the exec (XLA does it between a loop's
 * iterations): ktrace's instrumented copy follows it, so the program's
 * results are what its own exec computes (graph_app checks them) and the
 * launch after the set is still hashed, with no NOTE. */
static void test_nested_node_set_followed(void **state)
{
	struct recs x;
	unsigned hashed = 0, launches = 0;

	(void)state;
	gt_run_app("nested_set", "nested.ktrace", 1, 0);
	gt_read_recs("nested.ktrace", &x);
	assert_int_equal(gt_count_graph_notes(&x, NULL), 0);
	for (size_t i = 0; i < x.n; i++) {
		struct ktrace_rec_launch l;

		if (x.type[i] != KTRACE_REC_LAUNCH || ktrace_decode_launch(x.rec[i], x.len[i], &l) ||
		    !(l.flags & KTRACE_LAUNCHF_GRAPH) || l.graph.launch != 1)
			continue;
		launches++;
		hashed += !!(l.flags & KTRACE_LAUNCHF_HASHED);
	}
	assert_int_equal(launches, 1);
	assert_int_equal(hashed, 1);
	gt_free_recs(&x);
}

/* A node the program disables on its exec and enables again runs again in
 * ktrace's instrumented copy (graph_app checks z), and is recorded in the
 * launch after it is enabled. */
static void test_reenabled_node_runs(void **state)
{
	struct recs x;

	(void)state;
	gt_run_app("reenable", "reenable.ktrace", 1, 0);
	gt_read_recs("reenable.ktrace", &x);
	assert_int_equal(x.counters[KTRACE_CTR_GRAPH_LAUNCHES], 3);
	assert_int_equal(gt_count_type(&x, KTRACE_REC_MEMSET, 1), 2);
	assert_int_equal(gt_count_graph_notes(&x, NULL), 0);
	gt_free_recs(&x);
}

/* A kernel node with one hashed region fewer, then as many again, through
 * parameters set on the exec: ktrace's copy updated in place keeps its
 * device area, whose scratch words must be zero again where the smaller
 * revision's results lay (the fake's checksum kernel fails on others), and
 * the three launches are hashed, the last with both regions. */
static void test_regions_shrink_and_grow(void **state)
{
	struct recs x;
	struct ktrace_rec_launch l;

	(void)state;
	gt_run_app("regions", "regions.ktrace", 1, 0);
	gt_read_recs("regions.ktrace", &x);
	for (uint64_t k = 0; k < 3; k++) {
		assert_true(gt_graph_launch(&x, k, 0, &l));
		assert_true(l.flags & KTRACE_LAUNCHF_HASHED);
		assert_int_equal(l.result, 0);
	}
	assert_int_equal(l.graph.revision, 2);
	assert_int_equal(gt_count_graph_notes(&x, NULL), 0);
	gt_free_recs(&x);
}

/* ktrace's copy changing shape is updated by a new instantiation, not a
 * failure: the NOTE of a later set ktrace cannot follow (a child graph's
 * node disabled on the exec) names no driver call, where it named the
 * refused cuGraphExecUpdate of the copy. */
static void test_copy_reshaped_no_stale_failure(void **state)
{
	struct recs x;

	(void)state;
	gt_run_app("stale", "stale.ktrace", 1, 0);
	gt_read_recs("stale.ktrace", &x);
	assert_int_equal(gt_count_graph_notes(&x, "could not be followed"), 1);
	assert_int_equal(gt_count_graph_notes(&x, "returned"), 0);
	gt_free_recs(&x);
}

/* A replay run of graphs that cannot run node by node (a conditional, memory
 * nodes) says so in a NOTE per graph: memory nodes' kernel nodes are not
 * replayed, a conditional graph's only from their graph launch. */
static void test_replay_run_says_graph_runs_whole(void **state)
{
	struct recs x;

	(void)state;
	gt_extra_env = "KTRACE_REPLAY=kernel=fake_add_one,occurrence=1,runs=2";
	gt_run_app("untraced", "replayrun.ktrace", 0, 0);
	gt_extra_env = "KTRACE_QUIET=1";
	gt_read_recs("replayrun.ktrace", &x);
	assert_int_equal(gt_count_graph_notes(&x, "runs as one graph launch in this replay run, its kernel nodes are "
					       "not replayed: "), 1);
	/* the conditional one: its kernel nodes are replayed from their graph launch when named so */
	assert_int_equal(gt_count_graph_notes(&x, "runs as one graph launch in this replay run, its kernel nodes are "
					       "replayed only from their graph launch"), 1);
	gt_free_recs(&x);
}

/* ---- ktrace-dump --json ----------------------------------------------------------------------------- */

/* What the GPU tests count graph kernel launches per name with. */
static void test_dump_json(void **state)
{
	char cmd[3 * PATH_MAX], line[1 << 16];
	unsigned graph_launches = 0, graphs = 0;
	FILE *p;

	(void)state;
	snprintf(cmd, sizeof cmd, "%s/ktrace-dump --json %s/explicit0.ktrace", gt_build_dir, gt_tmp_dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof line, p)) {
		if (strstr(line, "{\"type\":\"launch\"") == line && strstr(line, "\"api\":\"graph\"") &&
		    strstr(line, "\"kernel\":\"fake_add_one\"") && strstr(line, "\"graph\":{\"exec_id\":1,"))
			graph_launches++;
		graphs += strstr(line, "{\"type\":\"graph\"") == line;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(graph_launches, 12);
	assert_int_equal(graphs, 4);
}

/* ---- ktrace check ----------------------------------------------------------------------------------- */

/* The node is confirmed non-deterministic by replaying it in isolation;
 * the deterministic graph passes. */
static void test_check_confirms_graph_node(void **state)
{
	static char out[1 << 16];
	int st;

	(void)state;
	st = gt_check_app("nondet", out, sizeof out);
	if (st != 1 || !strstr(out, "confirmed non-deterministic") || !strstr(out, "fake_nondet_sum"))
		fail_msg("ktrace check -- graph_app nondet: exit %d:\n%s", st, out);
	st = gt_check_app("same", out, sizeof out);
	if (st != 0)
		fail_msg("ktrace check -- graph_app same: exit %d:\n%s", st, out);
	/* a host function node: the replay runs it on the stream, in order */
	st = gt_check_app("nondet_host", out, sizeof out);
	if (st != 1 || !strstr(out, "confirmed non-deterministic") || !strstr(out, "fake_nondet_sum"))
		fail_msg("ktrace check -- graph_app nondet_host: exit %d:\n%s", st, out);
}

/* A graph that allocates memory inside it (as PyTorch's cudaMallocAsync
 * backend makes under capture) is not hashed: ktrace check, having chosen
 * the allocator, says so once and runs the program again with its own. */
static void test_check_memory_nodes_own_allocator(void **state)
{
	static char out[1 << 16];
	const char *note = "allocate memory inside the graph, which ktrace cannot hash; running it again with its "
			   "own allocator";
	const char *p;
	int st;

	(void)state;
	st = gt_check_app("untraced", out, sizeof out);
	p = strstr(out, note);
	if (st != 0 || !p || strstr(p + 1, note))
		fail_msg("ktrace check -- graph_app untraced: exit %d:\n%s", st, out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explicit_metadata),
		cmocka_unit_test(test_explicit_hashed),
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_diff_nondet_node),
		cmocka_unit_test(test_diff_unordered_nodes),
		cmocka_unit_test(test_untraced),
		cmocka_unit_test(test_instrument_failure_named),
		cmocka_unit_test(test_nested_node_set_followed),
		cmocka_unit_test(test_reenabled_node_runs),
		cmocka_unit_test(test_regions_shrink_and_grow),
		cmocka_unit_test(test_copy_reshaped_no_stale_failure),
		cmocka_unit_test(test_replay_run_says_graph_runs_whole),
		cmocka_unit_test(test_dump_json),
		cmocka_unit_test(test_check_confirms_graph_node),
		cmocka_unit_test(test_check_memory_nodes_own_allocator),
	};

	return cmocka_run_group_tests(tests, gt_setup, gt_teardown);
}
