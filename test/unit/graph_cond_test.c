/* test/unit/graph_cond_test.c: conditional graph nodes (IF, WHILE, SWITCH) end to end on the CPU.
 *
 * build/graph_app (test/unit/graph_app.c) runs under LD_PRELOAD=libktrace.so
 * with the fake driver's real-memory build, whose conditional nodes run as
 * the driver's do (test/fakecuda/fakegraph.c), and its traces must say:
 *  - the GRAPH record lists each conditional node (type, the program's
 *    handle, its default) and its bodies' nodes (flag in_conditional, the
 *    body they are in);
 *  - a WHILE body's kernel nodes give one LAUNCH per run of the body, with
 *    iterations 0 .. N-1 of N and the digests of the buffers as they were
 *    at that run; a loop that does not run gives none;
 *  - IF and SWITCH: only the body taken has records;
 *  - nested (WHILE { IF }): the inner body's records name the loop's run
 *    they ran in;
 *  - more runs than KTRACE_GRAPH_ITERS: the first and the last runs kept,
 *    the others counted as dropped in each record, and ktrace-dump says so;
 *  - the program's results are what it computes without ktrace (graph_app
 *    checks them and says OK);
 *  - the diff finds a non-deterministic kernel inside a loop body at its
 *    iteration, two runs of a deterministic loop compare identical, and a
 *    loop that ran another number of times is a divergence of its own;
 *  - `ktrace check` names the kernel and its iteration and confirms it by
 *    replay: KTRACE_REPLAY names the graph launch, node and iteration, and
 *    that run of the node is replayed alone from what gated copies took in
 *    ktrace's copy of the graph (a deterministic node is not reproduced, a
 *    run the loop never makes is not reached, the results stay the
 *    program's);
 *  - the copy's handles are made again in the program's order, so that
 *    handle values (1, 2, ... per graph, as the driver numbers them) in
 *    kernel parameters name the copy's: kernel int parameters equal to a
 *    handle value are left alone (the results are the same without ktrace,
 *    hashed or not);
 *  - a memset and a copy inside a WHILE body give one MEMSET and one
 *    MEMCPY per run (flag graph_iter, iterations 0 .. N-1 of N), numbered
 *    between the body's kernels in the body's order, and two runs compare
 *    identical;
 *  - a driver that gives the copy's handles other values (the fake's
 *    FAKECUDA_GLOBAL_HANDLES=1) leaves the graph without a copy: the
 *    program's exec runs, unhashed, the results unchanged, a NOTE says why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test/unit/graph_trace.h"

/* The LAUNCH records of body kernel node `node` of graph launch `launch`,
 * in record order, into v (at most max); how many. */
static unsigned body_launches(const struct recs *x, uint64_t launch, uint32_t node, struct ktrace_rec_launch *v,
			      unsigned max)
{
	unsigned n = 0;

	for (size_t i = 0; i < x->n && n < max; i++)
		if (x->type[i] == KTRACE_REC_LAUNCH && !ktrace_decode_launch(x->rec[i], x->len[i], &v[n]) &&
		    (v[n].flags & KTRACE_LAUNCHF_GRAPH_ITER) && v[n].graph.launch == launch && v[n].graph.node == node)
			n++;
	return n;
}

static unsigned iter_launches(const struct recs *x)
{
	unsigned n = 0;

	for (size_t i = 0; i < x->n; i++) {
		struct ktrace_rec_launch l;

		n += x->type[i] == KTRACE_REC_LAUNCH && !ktrace_decode_launch(x->rec[i], x->len[i], &l) &&
		     (l.flags & KTRACE_LAUNCHF_GRAPH_ITER);
	}
	return n;
}

/* add_one(x)'s digests at run `run` of all the loop's runs so far (x starts at 0 + i). */
static void check_add_one(const struct ktrace_rec_launch *l, int done_before)
{
	struct ktrace_region g;

	assert_true(l->flags & KTRACE_LAUNCHF_HASHED);
	ktrace_launch_region(l, 0, &g);
	assert_true((g.flags & KTRACE_REGIONF_PRE) && (g.flags & KTRACE_REGIONF_POST));
	assert_true(g.pre_hash == gt_floats_digest(0, (float)done_before, N, 0));
	assert_true(g.post_hash == gt_floats_digest(0, (float)done_before + 1, N, 0));
}

/* WHILE { add_one(x) -> loop_cond }: node 0 the WHILE, 1 add_one, 2 loop_cond. */
static void test_while_runs(void **state)
{
	struct ktrace_rec_launch v[16];
	struct ktrace_graph_node nodes[3];
	struct ktrace_rec_graph g;
	struct recs x;

	(void)state;
	gt_run_app("while 5", "while5.ktrace", 1, 0);
	gt_read_recs("while5.ktrace", &x);
	gt_graph_rev(&x, 0, &g);
	assert_true(g.flags & KTRACE_GRAPHF_HASHED);
	assert_int_equal(g.untraced, KTRACE_GRAPH_TRACED);
	assert_int_equal(g.nnodes, 3);
	gt_graph_nodes(&g, nodes);
	assert_int_equal(nodes[0].kind, KTRACE_GNODE_CONDITIONAL);
	assert_int_equal(nodes[0].cond_type, KTRACE_COND_WHILE);
	assert_int_equal(nodes[0].cond_size, 1);
	assert_int_equal(nodes[0].cond_default, 1);
	assert_int_equal(nodes[0].cond_flags, KTRACE_CONDF_ASSIGN_DEFAULT | KTRACE_CONDF_DEFAULT_KNOWN);
	for (int i = 1; i < 3; i++) {
		assert_int_equal(nodes[i].parent, 0);
		assert_int_equal(nodes[i].body, 0);
		assert_true(nodes[i].flags & KTRACE_GNODEF_IN_CONDITIONAL);
		assert_true(nodes[i].flags & KTRACE_GNODEF_HASHED);
	}
	for (uint64_t launch = 0; launch < 2; launch++) {
		assert_int_equal(body_launches(&x, launch, 1, v, 16), 5);
		for (uint32_t it = 0; it < 5; it++) {
			assert_int_equal(v[it].graph.iteration, it);
			assert_int_equal(v[it].graph.iterations, 5);
			assert_int_equal(v[it].graph.dropped, 0);
			assert_int_equal(v[it].graph.cond_node, 0);
			assert_int_equal(v[it].graph.outer_iteration, KTRACE_GRAPH_NO_ITERATION);
			assert_int_equal(v[it].api, KTRACE_API_GRAPH);
			check_add_one(&v[it], (int)(launch * 5 + it));
		}
		assert_int_equal(body_launches(&x, launch, 2, v, 16), 5);
	}
	assert_int_equal(iter_launches(&x), 20);
	assert_int_equal(x.counters[KTRACE_CTR_GRAPH_LAUNCHES_UNHASHED], 0);
	gt_free_recs(&x);

	/* a loop whose condition is 0 at the start runs no body: no records */
	gt_run_app("while 0", "while0.ktrace", 1, 0);
	gt_read_recs("while0.ktrace", &x);
	assert_int_equal(iter_launches(&x), 0);
	gt_graph_rev(&x, 0, &g);
	assert_true(g.flags & KTRACE_GRAPHF_HASHED);
	gt_free_recs(&x);
}

/* IF/else and SWITCH: node 0 set_cond, 1 the conditional, 2.. one add_one per body. */
static void check_taken(const char *mode, const char *name, uint32_t nbodies, uint32_t taken)
{
	struct ktrace_rec_launch v[4];
	struct ktrace_graph_node nodes[5];
	struct ktrace_rec_graph g;
	struct recs x;

	gt_run_app(mode, name, 1, 0);
	gt_read_recs(name, &x);
	gt_graph_rev(&x, 0, &g);
	assert_int_equal(g.nnodes, 2 + nbodies);
	gt_graph_nodes(&g, nodes);
	assert_int_equal(nodes[1].kind, KTRACE_GNODE_CONDITIONAL);
	assert_int_equal(nodes[1].cond_size, nbodies);
	for (uint32_t b = 0; b < nbodies; b++) {
		assert_int_equal(nodes[2 + b].body, b);
		assert_int_equal(body_launches(&x, 0, 2 + b, v, 4), b == taken);
		if (b == taken) {
			assert_int_equal(v[0].graph.iteration, 0);
			assert_int_equal(v[0].graph.iterations, 1);
			assert_int_equal(v[0].graph.body, b);
			assert_int_equal(v[0].graph.cond_node, 1);
		}
	}
	assert_int_equal(iter_launches(&x), taken < nbodies);
	gt_free_recs(&x);
}

static void test_if_switch(void **state)
{
	(void)state;
	check_taken("if 1", "if1.ktrace", 2, 0);
	check_taken("if 0", "if0.ktrace", 2, 1);
	check_taken("switch 2", "switch2.ktrace", 3, 2);
	check_taken("switch 5", "switch5.ktrace", 3, 5); /* no body of that index: none runs */
}

/* Parameters set on the exec of a graph ktrace has no mirror of cannot be
 * followed into its copy: the program's exec runs from then on (graph_app
 * checks it computed with the new parameters), unhashed, a NOTE says so. */
static void test_exec_set_params(void **state)
{
	struct ktrace_rec_launch v[4];
	struct recs x;

	(void)state;
	gt_run_app("if_set", "ifset.ktrace", 1, 0);
	gt_read_recs("ifset.ktrace", &x);
	assert_int_equal(body_launches(&x, 0, 3, v, 4), 1); /* launch 0: the else body, from ktrace's copy */
	assert_int_equal(body_launches(&x, 1, 2, v, 4), 0); /* launch 1: the program's exec, bodies unknown */
	assert_int_equal(x.counters[KTRACE_CTR_GRAPH_LAUNCHES_UNHASHED], 1);
	assert_int_equal(gt_count_graph_notes(&x, "node parameters set on the exec could not be followed"), 1);
	gt_free_recs(&x);
}

/* WHILE (3 runs) { add_one(x) -> loop_cond -> IF { add_one(y) } -> loop_cond }:
 * nodes 0 WHILE, 1 add_one(x), 2 loop_cond, 3 IF, 4 add_one(y), 5 loop_cond. */
static void test_nested(void **state)
{
	struct ktrace_rec_launch v[8];
	struct ktrace_graph_node nodes[6];
	struct ktrace_rec_graph g;
	struct ktrace_region r;
	struct recs x;

	(void)state;
	gt_run_app("nested", "nested.ktrace", 1, 0);
	gt_read_recs("nested.ktrace", &x);
	gt_graph_rev(&x, 0, &g);
	assert_int_equal(g.nnodes, 6);
	gt_graph_nodes(&g, nodes);
	assert_int_equal(nodes[3].kind, KTRACE_GNODE_CONDITIONAL);
	assert_int_equal(nodes[3].parent, 0);
	assert_int_equal(nodes[4].parent, 3);
	assert_int_equal(body_launches(&x, 0, 1, v, 8), 3);
	for (uint32_t it = 0; it < 3; it++)
		check_add_one(&v[it], (int)it);
	assert_int_equal(body_launches(&x, 0, 4, v, 8), 1); /* the IF is taken in the loop's first run only */
	assert_int_equal(v[0].graph.iteration, 0);
	assert_int_equal(v[0].graph.iterations, 1);
	assert_int_equal(v[0].graph.cond_node, 3);
	assert_int_equal(v[0].graph.outer_iteration, 0);
	ktrace_launch_region(&v[0], 0, &r);
	assert_true(r.pre_hash == gt_floats_digest(100, 0, N, 0));
	assert_true(r.post_hash == gt_floats_digest(100, 1, N, 0));
	gt_free_recs(&x);
}

/* 7 runs, a ring of 4: runs 0, 1, 5, 6 kept, 3 dropped, and said so. */
static void test_ring_overflow(void **state)
{
	static const uint32_t kept[4] = { 0, 1, 5, 6 };
	struct ktrace_rec_launch v[8];
	char cmd[3 * PATH_MAX], line[4096];
	unsigned said = 0;
	struct recs x;
	FILE *p;

	(void)state;
	gt_extra_env = "KTRACE_GRAPH_ITERS=4";
	gt_run_app("while 7", "ring.ktrace", 1, 0);
	gt_extra_env = "KTRACE_QUIET=1";
	gt_read_recs("ring.ktrace", &x);
	for (uint64_t launch = 0; launch < 2; launch++) {
		assert_int_equal(body_launches(&x, launch, 1, v, 8), 4);
		for (int k = 0; k < 4; k++) {
			assert_int_equal(v[k].graph.iteration, kept[k]);
			assert_int_equal(v[k].graph.iterations, 7);
			assert_int_equal(v[k].graph.dropped, 3);
			check_add_one(&v[k], (int)(launch * 7 + kept[k]));
		}
	}
	gt_free_recs(&x);
	snprintf(cmd, sizeof cmd, "%s/ktrace-dump %s/ring.ktrace", gt_build_dir, gt_tmp_dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof line, p))
		said += strstr(line, "iteration 5 of 7 of body 0 of node 0, 3 iterations not recorded") != NULL;
	assert_int_equal(pclose(p), 0);
	assert_int_equal(said, 4); /* add_one and loop_cond, each graph launch */
}

/* Traces A and B (of one deterministic program) compare identical,
 * `matched` launches matched. */
static void check_identical(const char *a_name, const char *b_name, unsigned matched)
{
	struct tm_trace a, b;
	struct diff_result r;

	gt_compare(a_name, b_name, &a, &b, &r);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.ndivs, 0);
	assert_int_equal(r.matched, matched);
	assert_int_equal(r.unverified, 0);
	assert_int_equal(r.set_aside, 0);
	assert_int_equal(r.body_runs.differ, 0);
	ktrace_diff_result_free(&r);
	ktrace_tm_free(&a);
	ktrace_tm_free(&b);
}

/* A non-deterministic kernel in a loop body is the first divergence, at
 * its iteration; a deterministic loop compares identical. */
static void test_diff_in_loop(void **state)
{
	struct tm_trace a, b;
	struct diff_result r;

	(void)state;
	gt_run_app("while_nondet 3", "wnd1.ktrace", 1, 1);
	gt_run_app("while_nondet 3", "wnd2.ktrace", 1, 2);
	gt_compare("wnd1.ktrace", "wnd2.ktrace", &a, &b, &r);
	assert_int_equal(r.status, 1);
	assert_true(r.ndivs >= 1);
	assert_string_equal(ktrace_tm_kernel_name(r.divs[0].la->look->kernel), "fake_nondet_sum");
	assert_int_equal(r.divs[0].cls, DIFF_CLASS_KERNEL_NONDET);
	assert_true(r.divs[0].la->flags & KTRACE_LAUNCHF_GRAPH_ITER);
	assert_int_equal(ktrace_tm_graph_ref(r.divs[0].la)->iteration, 0);
	assert_int_equal(ktrace_tm_graph_ref(r.divs[0].lb)->iteration, 0);
	ktrace_diff_result_free(&r);
	ktrace_tm_free(&a);
	ktrace_tm_free(&b);

	gt_run_app("while 4", "w4a.ktrace", 1, 1);
	gt_run_app("while 4", "w4b.ktrace", 1, 2);
	check_identical("w4a.ktrace", "w4b.ktrace", 16);

	/* a loop that ran 4 times against one that ran 5: a divergence in its own right */
	gt_run_app("while 5", "w5.ktrace", 1, 1);
	gt_compare("w4a.ktrace", "w5.ktrace", &a, &b, &r);
	assert_int_equal(r.status, 1);
	assert_int_equal(r.body_runs.differ, 2); /* each graph launch */
	assert_int_equal(r.body_runs.launch, 0);
	assert_int_equal(r.body_runs.cond_node, 0);
	assert_int_equal(r.body_runs.runs_a, 4);
	assert_int_equal(r.body_runs.runs_b, 5);
	ktrace_diff_result_free(&r);
	ktrace_tm_free(&a);
	ktrace_tm_free(&b);
}

/* ktrace check names the kernel and its iteration, and confirms it by
 * replaying that run of the body's kernel node alone. */
static void test_check_loop_body(void **state)
{
	static char out[1 << 16];
	char json[PATH_MAX + 16], cmd[3 * PATH_MAX + 256];
	int st;

	(void)state;
	st = gt_check_app("while_nondet 3", out, sizeof out);
	if (st != 1 || !strstr(out, "first divergence: fake_nondet_sum") ||
	    !strstr(out, "in a conditional node's body: iteration 0 (of 3 in A, 3 in B)") ||
	    !strstr(out, "(occurrence 0 of fake_nondet_sum): iteration 0 of 3: confirmed non-deterministic") ||
	    !strstr(out, "verdict: confirmed non-deterministic: fake_nondet_sum iteration 0 of 3 confirmed by replay"))
		fail_msg("ktrace check -- graph_app while_nondet 3: exit %d:\n%s", st, out);
	st = gt_check_app("while 4", out, sizeof out);
	if (st != 0)
		fail_msg("ktrace check -- graph_app while 4: exit %d:\n%s", st, out);
	/* the JSON report: the replayed entry's iteration, in the schema */
	snprintf(json, sizeof json, "%s/check.json", gt_tmp_dir);
	assert_int_equal(gt_check_app_json("while_nondet 3", json), 1);
	snprintf(cmd, sizeof cmd, "python3 test/tools/json_check.py docs/json/ktrace.schema.json check --document '%s' "
		 "&& grep -q '\"iteration\": 0,' '%s' && grep -q '\"outcome\": \"confirmed\"' '%s'", json, json, json);
	if (system(cmd) != 0)
		fail_msg("%s failed", cmd);
}

/* The one REPLAY record's report of trace name; 0, or -1 when it has none. */
static int replay_report(const char *name, struct ktrace_replay_report *rep)
{
	struct ktrace_rec_replay rr;
	struct recs x;
	int found = -1;

	gt_read_recs(name, &x);
	for (size_t i = 0; i < x.n; i++) {
		if (x.type[i] != KTRACE_REC_REPLAY)
			continue;
		assert_int_equal(found, -1);
		assert_int_equal(ktrace_decode_replay(x.rec[i], x.len[i], &rr), 0);
		assert_int_equal(ktrace_replay_report_parse(rr.blob, rr.blob_len, rep), 0);
		found = 0;
	}
	gt_free_recs(&x);
	return found;
}

static void app_output(char *out, size_t size);
static void bare_output(const char *env, const char *mode, char *out, size_t size);

/* KTRACE_REPLAY naming a body's kernel node by its graph launch and
 * iteration: that run replayed alone from what the gated copies took; the
 * program's results unchanged whatever the outcome. */
static void replay_body(const char *mode, const char *spec, struct ktrace_replay_report *rep)
{
	static char env[512];
	char bare[512], traced[512];

	snprintf(env, sizeof env, "KTRACE_REPLAY=%s", spec);
	gt_extra_env = env;
	gt_run_app(mode, "replay.ktrace", 0, 0);
	gt_extra_env = "KTRACE_QUIET=1";
	app_output(traced, sizeof traced);
	bare_output("", mode, bare, sizeof bare);
	if (strncmp(mode, "while_nondet", 12) != 0) /* its sums differ from run to run anyway */
		assert_string_equal(traced, bare);
	assert_non_null(strstr(traced, "OK"));
	memset(rep, 0, sizeof(*rep));
	if (replay_report("replay.ktrace", rep))
		rep->outcome = 0xff;
}

/* Conditional graphs made and destroyed one after the other, their
 * addresses reused by the next ones: each described from what the program
 * made it with (cuGraphDestroy forgot the last one's), hashed. */
static void test_graphs_destroyed(void **state)
{
	struct ktrace_rec_graph g;
	unsigned graphs = 0;
	struct recs x;

	(void)state;
	gt_run_app("churn 300", "churn.ktrace", 1, 0);
	gt_read_recs("churn.ktrace", &x);
	for (size_t i = 0; i < x.n; i++) {
		if (x.type[i] != KTRACE_REC_GRAPH)
			continue;
		assert_int_equal(ktrace_decode_graph(x.rec[i], x.len[i], &g), 0);
		assert_int_equal(g.untraced, KTRACE_GRAPH_TRACED);
		assert_true(g.flags & KTRACE_GRAPHF_HASHED);
		graphs++;
	}
	assert_int_equal(graphs, 300);
	assert_int_equal(iter_launches(&x), 300 * 2 * 2);
	gt_free_recs(&x);
}

/* A replay run with hashing on or off loads ktrace's kernels once in the
 * one context of the fake driver (hash/hash_module.c): the program's own
 * load and ktrace's make two. */
static void test_replay_body_one_module(void **state)
{
	static const char spec[] =
		"KTRACE_REPLAY=kernel=fake_add_one,occurrence=6,graph_exec=1,graph_launch=1,node=1,iteration=2";
	struct ktrace_replay_report rep;
	char out[512];

	(void)state;
	for (int hash = 0; hash <= 1; hash++) {
		gt_extra_env = spec;
		gt_extra_env2 = "GRAPH_APP_LOADS=1";
		gt_run_app("while 4", "replay.ktrace", hash, 0);
		gt_extra_env = gt_extra_env2 = "KTRACE_QUIET=1";
		app_output(out, sizeof out);
		if (!strstr(out, "module loads 2\n"))
			fail_msg("graph_app while 4 (hash %d) replaying a body node:\n%s", hash, out);
		memset(&rep, 0, sizeof(rep));
		assert_int_equal(replay_report("replay.ktrace", &rep), 0);
		assert_int_equal(rep.outcome, KTRACE_REPLAY_NOT_REPRODUCED);
		assert_int_equal(rep.runs_done, 8);
		ktrace_replay_report_free(&rep);
	}
}

static void test_replay_body_node(void **state)
{
	struct ktrace_replay_report rep;

	(void)state;
	/* WHILE { add_one(x) -> loop_cond }, two launches of exec 1: the second's run 2 */
	replay_body("while 4", "kernel=fake_add_one,occurrence=6,graph_exec=1,graph_launch=1,node=1,iteration=2", &rep);
	assert_int_equal(rep.outcome, KTRACE_REPLAY_NOT_REPRODUCED);
	assert_int_equal(rep.body, 1);
	assert_int_equal(rep.iteration, 2);
	assert_int_equal(rep.occurrence, 6);
	assert_int_equal(rep.runs_done, 8);
	assert_string_equal(rep.kernel, "fake_add_one");
	ktrace_replay_report_free(&rep);
	/* the summation order changes from launch to launch: confirmed */
	replay_body("while_nondet 3", "kernel=fake_nondet_sum,occurrence=1,graph_exec=1,graph_launch=0,node=2,iteration=1",
		    &rep);
	assert_int_equal(rep.outcome, KTRACE_REPLAY_CONFIRMED);
	assert_int_equal(rep.iteration, 1);
	assert_true(rep.distinct > 1);
	ktrace_replay_report_free(&rep);
	/* a run the loop never makes */
	replay_body("while 4", "kernel=fake_add_one,occurrence=6,graph_exec=1,graph_launch=1,node=1,iteration=9", &rep);
	assert_int_equal(rep.outcome, KTRACE_REPLAY_NOT_REPLAYABLE);
	assert_int_equal(rep.reason, KTRACE_REPLAY_NOT_REACHED);
	assert_non_null(strstr(rep.detail, "iteration 9 of the body did not run in graph launch 1 of exec 1"));
	ktrace_replay_report_free(&rep);
	/* WHILE { ... IF { add_one(y) } ... }: the IF body ran in the loop's run 0 only */
	replay_body("nested", "kernel=fake_add_one,occurrence=3,graph_exec=1,graph_launch=0,node=4,iteration=0,outer=0",
		    &rep);
	assert_int_equal(rep.outcome, KTRACE_REPLAY_NOT_REPRODUCED);
	assert_int_equal(rep.outer_iteration, 0);
	ktrace_replay_report_free(&rep);
	replay_body("nested", "kernel=fake_add_one,occurrence=3,graph_exec=1,graph_launch=0,node=4,iteration=0,outer=1",
		    &rep);
	assert_int_equal(rep.reason, KTRACE_REPLAY_NOT_REACHED);
	ktrace_replay_report_free(&rep);
}

/* A kernel node at the top level of a graph holding a WHILE node, named by
 * its graph launch and node alone: its gates always open. */
static void test_replay_top_level_node(void **state)
{
	static char out[1 << 16];
	struct ktrace_replay_report rep;
	int st;

	(void)state;
	/* add_one(x) -> WHILE { add_one(x) -> loop_cond }: the second launch's top node */
	replay_body("while_top 3", "kernel=fake_add_one,occurrence=4,graph_exec=1,graph_launch=1,node=0", &rep);
	assert_int_equal(rep.outcome, KTRACE_REPLAY_NOT_REPRODUCED);
	assert_int_equal(rep.body, 0);
	assert_int_equal(rep.occurrence, 4);
	assert_int_equal(rep.runs_done, 8);
	ktrace_replay_report_free(&rep);
	{ /* the NOTE of the replay run says how such a graph's nodes are replayed */
		struct recs x;

		gt_read_recs("replay.ktrace", &x);
		assert_int_equal(gt_count_graph_notes(&x, "its kernel nodes are replayed only from their graph launch "
							  "(KTRACE_REPLAY's graph_exec, graph_launch and node)"), 1);
		gt_free_recs(&x);
	}
	/* nondet_sum(out, x) -> WHILE { ... }: confirmed */
	replay_body("while_top_nondet 3",
		    "kernel=fake_nondet_sum,occurrence=0,graph_exec=1,graph_launch=0,node=0,iteration=none", &rep);
	assert_int_equal(rep.outcome, KTRACE_REPLAY_CONFIRMED);
	assert_int_equal(rep.body, 0);
	assert_true(rep.distinct > 1);
	ktrace_replay_report_free(&rep);
	/* ktrace check names it so and confirms it */
	st = gt_check_app("while_top_nondet 3", out, sizeof out);
	if (st != 1 || !strstr(out, "first divergence: fake_nondet_sum") ||
	    !strstr(out, "(occurrence 0 of fake_nondet_sum): confirmed non-deterministic") ||
	    !strstr(out, "verdict: confirmed non-deterministic: fake_nondet_sum (launch 4 in A)"))
		fail_msg("ktrace check -- graph_app while_top_nondet 3: exit %d:\n%s", st, out);
	st = gt_check_app("while_top 3", out, sizeof out);
	if (st != 0)
		fail_msg("ktrace check -- graph_app while_top 3: exit %d:\n%s", st, out);
}

/* No replay: a NOTE of code REPLAY that says `says`, no REPLAY record, the
 * program's results its own. */
static void replay_refused(const char *mode, const char *spec, const char *says)
{
	struct ktrace_replay_report rep;
	struct recs x;

	replay_body(mode, spec, &rep);
	assert_int_equal(rep.outcome, 0xff);
	gt_read_recs("replay.ktrace", &x);
	if (gt_count_notes(&x, KTRACE_NOTE_CODE_REPLAY, says) != 1)
		fail_msg("graph_app %s with KTRACE_REPLAY=%s: no NOTE '%s'", mode, spec, says);
	gt_free_recs(&x);
}

static void test_replay_body_refused(void **state)
{
	(void)state;
	/* a driver that numbers the copy's handles otherwise: no copy, the program's exec runs */
	gt_extra_env2 = "FAKECUDA_GLOBAL_HANDLES=1";
	replay_refused("while 4", "kernel=fake_add_one,occurrence=6,graph_exec=1,graph_launch=1,node=1,iteration=2",
		       "replay: node 1 of graph exec 1 cannot be replayed: ktrace's copy of the graph could not be built");
	gt_extra_env2 = "KTRACE_QUIET=1";
	/* a node set on the exec after the copy was built: the copy would run the old parameters */
	replay_refused("if_set", "kernel=fake_add_one,occurrence=1,graph_exec=1,graph_launch=1,node=2,iteration=0",
		       "replay: node 2 of graph exec 1 cannot be replayed: node parameters set on the exec could not "
		       "be followed");
	/* a body's node named without its iteration */
	replay_refused("while 4", "kernel=fake_add_one,graph_exec=1,graph_launch=0,node=1",
		       "replay: node 1 of graph exec 1 cannot be replayed: the kernel node lies in a conditional body: its "
		       "iteration must be named");
	/* node 0 is the conditional node */
	replay_refused("while 4", "kernel=fake_add_one,graph_exec=1,graph_launch=0,node=0,iteration=0",
		       "replay: node 0 of graph exec 1 cannot be replayed: the graph has no kernel node of that index");
}

/* graph_app's output of its last run. */
static void app_output(char *out, size_t size)
{
	char path[PATH_MAX + 16];
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "%s/stdout", gt_tmp_dir);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(out, 1, size - 1, f);
	out[n] = '\0';
	fclose(f);
}

/* graph_app MODE's output without ktrace (env: settings before it, or ""). */
static void bare_output(const char *env, const char *mode, char *out, size_t size)
{
	char cmd[3 * PATH_MAX];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof cmd, "%s LD_LIBRARY_PATH=%s/fakecuda-real %s/graph_app %s", env, gt_build_dir, gt_build_dir,
		 mode);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
}

/* Body kernels whose int parameter n equals a handle value (h: 2, h0: 1)
 * add to as many elements as without ktrace; records say n as it was. */
static void test_param_equal_to_handle(void **state)
{
	char bare[512], traced[512], meta[512];
	struct ktrace_rec_launch v[8];
	struct ktrace_rec_graph g;
	struct recs x;
	int32_t n;

	(void)state;
	gt_run_app("while_n 3", "whilen.ktrace", 1, 0);
	app_output(traced, sizeof traced);
	gt_run_app("while_n 3", "whilen0.ktrace", 0, 0);
	app_output(meta, sizeof meta);
	bare_output("", "while_n 3", bare, sizeof bare);
	assert_non_null(strstr(bare, "n 2 1 x 6 7 2 3 y 6 1 2 3"));
	assert_string_equal(traced, bare);
	assert_string_equal(meta, bare);
	gt_read_recs("whilen.ktrace", &x);
	gt_graph_rev(&x, 0, &g);
	assert_int_equal(g.untraced, KTRACE_GRAPH_TRACED);
	assert_true(g.flags & KTRACE_GRAPHF_HASHED);
	assert_int_equal(gt_count_graph_notes(&x, NULL), 0);
	for (uint32_t node = 2; node <= 3; node++) {
		assert_int_equal(body_launches(&x, 1, node, v, 8), 3);
		for (int it = 0; it < 3; it++) {
			assert_true(v[it].flags & KTRACE_LAUNCHF_HASHED);
			assert_true(v[it].param_bytes_len >= 12);
			memcpy(&n, v[it].param_bytes + 8, sizeof(n));
			assert_int_equal(n, node == 2 ? 2 : 1);
		}
	}
	gt_free_recs(&x);
}

/* Handles the driver numbers otherwise than per graph: the copy's handle
 * values cannot be the program's, so no copy; the program's exec runs. */
static void test_handle_values_differ(void **state)
{
	char bare[512], traced[512];
	struct ktrace_rec_graph g;
	struct recs x;

	(void)state;
	gt_extra_env = "FAKECUDA_GLOBAL_HANDLES=1";
	gt_run_app("while_n 3", "whileg.ktrace", 1, 0);
	app_output(traced, sizeof traced);
	gt_extra_env = "KTRACE_QUIET=1";
	bare_output("FAKECUDA_GLOBAL_HANDLES=1", "while_n 3", bare, sizeof bare);
	assert_string_equal(traced, bare);
	gt_read_recs("whileg.ktrace", &x);
	gt_graph_rev(&x, 0, &g);
	assert_int_equal(g.untraced, KTRACE_GRAPH_UNTRACED_DRIVER);
	assert_false(g.flags & KTRACE_GRAPHF_HASHED);
	assert_int_equal(gt_count_graph_notes(&x, "got another value than the program's"), 1);
	assert_int_equal(iter_launches(&x), 0);
	assert_int_equal(x.counters[KTRACE_CTR_GRAPH_LAUNCHES_UNHASHED], 2);
	gt_free_recs(&x);
}

/* The MEMCPY (memcpy set) or MEMSET records of graph launch `launch` with
 * an iteration reference, in record order: their iterations into it[],
 * their op_seq into seq[]; how many. */
static unsigned body_copies(const struct recs *x, int memcpy_recs, uint64_t launch, uint32_t *it, uint64_t *seq,
			    unsigned max)
{
	unsigned n = 0;

	for (size_t i = 0; i < x->n && n < max; i++) {
		struct ktrace_rec_memcpy c;
		struct ktrace_rec_memset m;
		const struct ktrace_graph_ref *g = memcpy_recs ? &c.graph : &m.graph;
		uint32_t flags;

		if (x->type[i] != (memcpy_recs ? KTRACE_REC_MEMCPY : KTRACE_REC_MEMSET))
			continue;
		if (memcpy_recs ? ktrace_decode_memcpy(x->rec[i], x->len[i], &c) : ktrace_decode_memset(x->rec[i], x->len[i], &m))
			fail_msg("a record that does not decode");
		flags = memcpy_recs ? c.flags : m.flags;
		if (!(flags & KTRACE_COPYF_GRAPH_ITER) || g->launch != launch)
			continue;
		assert_true(flags & KTRACE_COPYF_GRAPH);
		assert_int_equal(g->iterations, 3);
		assert_int_equal(g->cond_node, 0);
		assert_int_equal(g->dropped, 0);
		it[n] = g->iteration;
		seq[n++] = memcpy_recs ? c.op_seq : m.op_seq;
	}
	return n;
}

/* WHILE { memset z -> add_one(x) -> memcpy x -> y -> loop_cond }, 3 runs:
 * nodes 0 WHILE, 1 memset, 2 add_one, 3 memcpy, 4 loop_cond. */
static void test_body_copies(void **state)
{
	struct ktrace_rec_launch v[8];
	uint32_t it[8];
	uint64_t seq[8];
	struct recs x;

	(void)state;
	gt_run_app("while_copy 3", "wcopy.ktrace", 1, 1);
	gt_read_recs("wcopy.ktrace", &x);
	for (uint64_t launch = 0; launch < 2; launch++) {
		assert_int_equal(body_launches(&x, launch, 2, v, 8), 3);
		assert_int_equal(body_copies(&x, 1, launch, it, seq, 8), 3);
		for (uint32_t k = 0; k < 3; k++) {
			assert_int_equal(it[k], k);
			assert_true(seq[k] == v[k].launch_seq + 1); /* the copy follows add_one in the body's order */
		}
		assert_int_equal(body_copies(&x, 0, launch, it, seq, 8), 3);
		for (uint32_t k = 0; k < 3; k++) {
			assert_int_equal(it[k], k);
			assert_true(seq[k] + 1 == v[k].launch_seq); /* the memset comes first */
		}
	}
	gt_free_recs(&x);
	gt_run_app("while_copy 3", "wcopy2.ktrace", 1, 2);
	check_identical("wcopy.ktrace", "wcopy2.ktrace", 12); /* add_one and loop_cond, 3 runs, 2 launches */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_while_runs),
		cmocka_unit_test(test_if_switch),
		cmocka_unit_test(test_exec_set_params),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_ring_overflow),
		cmocka_unit_test(test_diff_in_loop),
		cmocka_unit_test(test_check_loop_body),
		cmocka_unit_test(test_replay_body_node),
		cmocka_unit_test(test_replay_body_one_module),
		cmocka_unit_test(test_graphs_destroyed),
		cmocka_unit_test(test_replay_top_level_node),
		cmocka_unit_test(test_replay_body_refused),
		cmocka_unit_test(test_param_equal_to_handle),
		cmocka_unit_test(test_handle_values_differ),
		cmocka_unit_test(test_body_copies),
	};

	return cmocka_run_group_tests(tests, gt_setup, gt_teardown);
}
