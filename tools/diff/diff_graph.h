/* tools/diff/diff_graph.h: the order of nodes inside one graph launch.
 *
 * Nodes of one graph launch are ordered only by the edges of their GRAPH
 * record (format 1.8): two nodes no path connects may run at the same time.
 * diff_graph.c answers, for two nodes of one graph launch, whether a path
 * of edges connects them, from the trace model's graphs (tools/trace_model.h),
 * with each source node's reachable set computed once and kept.
 */
#ifndef KTRACE_TOOLS_DIFF_GRAPH_H
#define KTRACE_TOOLS_DIFF_GRAPH_H

#include "tools/model/trace_model.h"

struct diff_graph_order;

/* The reachability of t's graphs; NULL when out of memory.  t must outlive it. */
struct diff_graph_order *ktrace_diff_graph_order_new(const struct tm_trace *t);
void ktrace_diff_graph_order_free(struct diff_graph_order *g);

/* Nodes a and b (graph references of one graph launch): 1 when a path of
 * edges leads from one to the other (or a == b), 0 when none does (they may
 * run concurrently).  Nodes of a graph whose GRAPH record is missing or
 * incomplete are taken as concurrent (0): the cautious answer. */
int ktrace_diff_graph_ordered(struct diff_graph_order *g, const struct ktrace_graph_ref *a,
			      const struct ktrace_graph_ref *b);

#endif
