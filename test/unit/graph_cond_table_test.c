/* test/unit/graph_cond_table_test.c: the tables of conditional handles and
 * nodes (interpose/graph/graph_cond.c) as the graph hooks fill them: what a
 * graph made is found while it lives and forgotten with it, its bodies'
 * at every depth, so that a program making and destroying graphs keeps
 * the tables bounded; a node address reused in another graph belongs to
 * that graph.  kt_gcond_graph_destroyed is what cuGraphDestroy's hook
 * (graph_registry.c) calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/driver/driver_real.h"
#include "interpose/graph/graph.h"
#include "interpose/graph/graph_internal.h"

struct ktrace_real_driver ktrace_real; /* no driver: a node the tables lack is unknown */

#define GRAPH(i) ((CUgraph)(uintptr_t)(0x100000 + 0x100 * (uint64_t)(i)))
#define BODY(i) ((CUgraph)(uintptr_t)(0x200000 + 0x100 * (uint64_t)(i)))
#define INNER_BODY(i) ((CUgraph)(uintptr_t)(0x300000 + 0x100 * (uint64_t)(i)))
#define NODE(i) ((CUgraphNode)(uintptr_t)(0x400000 + 0x100 * (uint64_t)(i)))
#define INNER_NODE(i) ((CUgraphNode)(uintptr_t)(0x500000 + 0x100 * (uint64_t)(i)))

/* cuGraphAddNode of a WHILE node of handle h with one body, on graph g. */
static void add_while(CUgraphNode n, CUgraph g, uint64_t h, CUgraph *body)
{
	CUgraphNodeParams p;

	memset(&p, 0, sizeof(p));
	p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
	p.conditional.handle = h;
	p.conditional.type = CU_GRAPH_COND_TYPE_WHILE;
	p.conditional.size = 1;
	p.conditional.phGraph_out = body;
	ktrace_on_graph_node_params(n, g, &p);
}

static uint32_t handles_of(CUgraph g)
{
	struct kt_ghandle *v;
	uint32_t n;

	assert_int_equal(kt_gcond_graph_handles(g, &v, &n), 0);
	free(v);
	return n;
}

static void assert_counts(uint32_t graphs, uint32_t nodes)
{
	uint32_t g, n;

	kt_gcond_counts(&g, &n);
	assert_int_equal(g, graphs);
	assert_int_equal(n, nodes);
}

/* Graph i: WHILE (handle 1 on it) { WHILE (handle 1 on the body) { } }. */
static void make_nested(uint32_t i)
{
	CUgraph body = BODY(i), inner = INNER_BODY(i);

	ktrace_on_graph_cond_handle(1, GRAPH(i), 1, 0);
	add_while(NODE(i), GRAPH(i), 1, &body);
	ktrace_on_graph_cond_handle(1, BODY(i), 0, 0);
	add_while(INNER_NODE(i), BODY(i), 1, &inner);
}

/* 1000 graphs of nested conditional nodes, made and destroyed one after
 * the other: each found while it lives, nothing of it left after. */
static void test_thousand_graphs(void **state)
{
	struct kt_gcond c;

	(void)state;
	assert_counts(0, 0);
	for (uint32_t i = 0; i < 1000; i++) {
		make_nested(i);
		assert_int_equal(kt_gcond_lookup(NODE(i), &c), 0);
		assert_ptr_equal(c.bodies[0], BODY(i));
		assert_int_equal(kt_gcond_lookup(INNER_NODE(i), &c), 0);
		assert_ptr_equal(c.bodies[0], INNER_BODY(i));
		assert_int_equal(handles_of(GRAPH(i)), 1);
		assert_int_equal(handles_of(BODY(i)), 1);
		assert_counts(2, 2);
		kt_gcond_graph_destroyed(GRAPH(i));
		assert_counts(0, 0);
		assert_int_equal(kt_gcond_lookup(NODE(i), &c), -1);
		assert_int_equal(kt_gcond_lookup(INNER_NODE(i), &c), -1);
		assert_int_equal(handles_of(GRAPH(i)), 0);
		assert_int_equal(handles_of(BODY(i)), 0);
	}
}

/* Destroying one graph leaves the others' entries. */
static void test_others_kept(void **state)
{
	struct kt_gcond c;

	(void)state;
	for (uint32_t i = 0; i < 3; i++)
		make_nested(i);
	assert_counts(6, 6);
	kt_gcond_graph_destroyed(GRAPH(1));
	assert_counts(4, 4);
	assert_int_equal(kt_gcond_lookup(NODE(1), &c), -1);
	assert_int_equal(kt_gcond_lookup(INNER_NODE(0), &c), 0);
	assert_int_equal(kt_gcond_lookup(NODE(2), &c), 0);
	assert_int_equal(handles_of(BODY(2)), 1);
	kt_gcond_graph_destroyed(GRAPH(7)); /* never seen: nothing */
	assert_counts(4, 4);
	kt_gcond_graph_destroyed(GRAPH(0));
	kt_gcond_graph_destroyed(GRAPH(2));
	assert_counts(0, 0);
}

/* A node address reused in another graph (its first node destroyed
 * unseen) is that graph's: the first graph's destruction keeps it. */
static void test_node_reused(void **state)
{
	CUgraph body = BODY(0), other = BODY(1);
	struct kt_gcond c;

	(void)state;
	add_while(NODE(0), GRAPH(0), 1, &body);
	add_while(NODE(0), GRAPH(1), 2, &other);
	assert_counts(2, 1);
	kt_gcond_graph_destroyed(GRAPH(0));
	assert_counts(1, 1);
	assert_int_equal(kt_gcond_lookup(NODE(0), &c), 0);
	assert_int_equal(c.handle, 2);
	assert_ptr_equal(c.bodies[0], BODY(1));
	kt_gcond_graph_destroyed(GRAPH(1));
	assert_counts(0, 0);
	assert_int_equal(kt_gcond_lookup(NODE(0), &c), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thousand_graphs),
		cmocka_unit_test(test_others_kept),
		cmocka_unit_test(test_node_reused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
