/* tools/diff/diff_graph.c: reachability between the nodes of a graph (diff_graph.h).
 *
 * Owns, per GRAPH revision of the trace, its edges as adjacency lists and,
 * computed on demand by a breadth-first walk, the set of nodes each source
 * node reaches (a bitset kept for later questions); the order of the nodes
 * of conditional bodies (runs of a body one after the other, a body's
 * nodes within its conditional node's place); and the count of a
 * run's executable graphs, those not traced in full by reason, and the
 * report's line about them.  Uses the trace model only.
 */
#include "tools/diff/diff_graph.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tools/diff/diff_internal.h"

struct reach {
	uint32_t *start, *succ;  /* adjacency (CSR) of the graph's edges */
	uint64_t **from;         /* per node: the bitset of the nodes it reaches (NULL: not yet) */
	int bad;                 /* incomplete or out of memory: every answer is "concurrent" */
};

struct diff_graph_order {
	const struct tm_trace *t;
	struct reach *r;         /* per t->graphs[i] */
};

struct diff_graph_order *ktrace_diff_graph_order_new(const struct tm_trace *t)
{
	struct diff_graph_order *g = calloc(1, sizeof *g);

	if (!g)
		return NULL;
	g->t = t;
	g->r = calloc(t->ngraphs + 1, sizeof *g->r);
	if (!g->r) {
		free(g);
		return NULL;
	}
	return g;
}

void ktrace_diff_graph_order_free(struct diff_graph_order *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->t->ngraphs; i++) {
		struct reach *r = &g->r[i];
		for (uint32_t k = 0; r->from && k < g->t->graphs[i].nnodes; k++)
			free(r->from[k]);
		free(r->from);
		free(r->start);
		free(r->succ);
	}
	free(g->r);
	free(g);
}

/* The adjacency of graph gr into r.  0 or -1. */
static int build(const struct tm_graph *gr, struct reach *r)
{
	r->start = calloc((size_t)gr->nnodes + 2, sizeof *r->start);
	r->succ = malloc(((size_t)gr->nedges + 1) * sizeof *r->succ);
	r->from = calloc((size_t)gr->nnodes + 1, sizeof *r->from);
	if (!r->start || !r->succ || !r->from)
		return -1;
	for (uint32_t e = 0; e < gr->nedges; e++)
		r->start[gr->edges[e].from + 2]++;
	for (uint32_t i = 0; i < gr->nnodes; i++)
		r->start[i + 2] += r->start[i + 1];
	for (uint32_t e = 0; e < gr->nedges; e++)
		r->succ[r->start[gr->edges[e].from + 1]++] = gr->edges[e].to;
	return 0;
}

/* The bitset of the nodes a reaches (a included); NULL on failure. */
static const uint64_t *reached(const struct tm_graph *gr, struct reach *r, uint32_t a)
{
	size_t words = ((size_t)gr->nnodes + 63) / 64;
	uint32_t *queue, head = 0, n = 0;
	uint64_t *seen;

	if (r->from[a])
		return r->from[a];
	seen = calloc(words + 1, sizeof *seen);
	queue = malloc(((size_t)gr->nnodes + 1) * sizeof *queue);
	if (!seen || !queue) {
		free(seen);
		free(queue);
		return NULL;
	}
	seen[a / 64] |= 1ull << (a % 64);
	queue[n++] = a;
	while (head < n) {
		uint32_t x = queue[head++];
		for (uint32_t k = r->start[x]; k < r->start[x + 1]; k++) {
			uint32_t y = r->succ[k];
			if (!(seen[y / 64] & (1ull << (y % 64)))) {
				seen[y / 64] |= 1ull << (y % 64);
				queue[n++] = y;
			}
		}
	}
	free(queue);
	r->from[a] = seen;
	return seen;
}

static int reaches(const struct tm_graph *gr, struct reach *r, uint32_t a, uint32_t b)
{
	const uint64_t *s = reached(gr, r, a);

	if (!s) {
		r->bad = 1;
		return 0;
	}
	return (s[b / 64] >> (b % 64)) & 1;
}

/* The conditional node whose body holds node x (through child graphs), or NO_PARENT. */
static uint32_t cond_of(const struct tm_graph *gr, uint32_t x)
{
	uint32_t p = gr->parent[x];

	while (p != KTRACE_GRAPH_NO_PARENT && p < gr->nnodes && gr->kind[p] != KTRACE_GNODE_CONDITIONAL)
		p = gr->parent[p];
	return p < gr->nnodes ? p : KTRACE_GRAPH_NO_PARENT;
}

static uint32_t cond_depth(const struct tm_graph *gr, uint32_t x)
{
	uint32_t d = 0;

	for (x = cond_of(gr, x); x != KTRACE_GRAPH_NO_PARENT && d < gr->nnodes; x = cond_of(gr, x))
		d++;
	return d;
}

/* A node of a graph launch: which, and the run of its body (NO_ITERATION: none known). */
struct place {
	uint32_t node, run;
};

/* p stands for itself by the conditional node around it (lifts: how many
 * times before), in the run of the body around that the iteration
 * reference names (known one level up only). */
static struct place lift(const struct tm_graph *gr, struct place p, uint32_t *lifts, const struct ktrace_graph_ref *ref)
{
	struct place up = { cond_of(gr, p.node), *lifts ? KTRACE_GRAPH_NO_ITERATION : ref->outer_iteration };

	if (!ref->iterations)
		up.run = KTRACE_GRAPH_NO_ITERATION;
	++*lifts;
	return up;
}

/* Nodes in one graph, brought to one body: ordered when one is the
 * other's conditional node, when they ran in different runs of their
 * body, or by the edges. */
static int places_ordered(const struct tm_graph *gr, struct reach *r, struct place x, struct place y,
			  const struct ktrace_graph_ref *a, const struct ktrace_graph_ref *b)
{
	uint32_t dx = cond_depth(gr, x.node), dy = cond_depth(gr, y.node), lx = 0, ly = 0;

	for (; dx > dy; dx--)
		x = lift(gr, x, &lx, a);
	for (; dy > dx; dy--)
		y = lift(gr, y, &ly, b);
	while (cond_of(gr, x.node) != cond_of(gr, y.node)) {
		x = lift(gr, x, &lx, a);
		y = lift(gr, y, &ly, b);
	}
	if (x.node == y.node)
		return 1;
	if (x.run != KTRACE_GRAPH_NO_ITERATION && y.run != KTRACE_GRAPH_NO_ITERATION && x.run != y.run)
		return 1;
	return reaches(gr, r, x.node, y.node) || reaches(gr, r, y.node, x.node);
}

int ktrace_diff_graph_ordered(struct diff_graph_order *g, const struct ktrace_graph_ref *a,
			      const struct ktrace_graph_ref *b)
{
	const struct tm_graph *gr = ktrace_tm_graph(g->t, a->exec_id, a->revision);
	struct reach *r;

	if (a->node == b->node)
		return 1;
	if (!gr || b->exec_id != a->exec_id || b->revision != a->revision || gr->nodes_seen != gr->nnodes ||
	    gr->edges_seen != gr->nedges || a->node >= gr->nnodes || b->node >= gr->nnodes)
		return 0;
	r = &g->r[gr - g->t->graphs];
	if (!r->bad && !r->start && build(gr, r))
		r->bad = 1;
	if (r->bad)
		return 0;
	return places_ordered(gr, r, (struct place){ a->node, a->iterations ? a->iteration : KTRACE_GRAPH_NO_ITERATION },
			      (struct place){ b->node, b->iterations ? b->iteration : KTRACE_GRAPH_NO_ITERATION }, a, b);
}

/* ---- counts ---------------------------------------------------------------------------- */

void ktrace_diff_count_graphs(const struct tm_trace *t, struct diff_graphs *g)
{
	memset(g, 0, sizeof *g);
	g->launches = t->counters[KTRACE_CTR_GRAPH_LAUNCHES];
	/* graphs are sorted by exec: each exec once, under the reason of its
	 * first revision not traced in full */
	for (size_t i = 0, e; i < t->ngraphs; i = e) {
		uint32_t why = 0;
		for (e = i; e < t->ngraphs && t->graphs[e].exec_id == t->graphs[i].exec_id; e++)
			if (!why)
				why = t->graphs[e].untraced;
		g->execs++;
		if (why) {
			g->untraced++;
			g->why[why < 8 ? why : 0]++;
		}
	}
}

static void text_untraced(FILE *f, const struct diff_graphs *g)
{
	int first = 1;
	if (!g->untraced)
		return;
	fputs(" (", f);
	for (uint32_t w = 0; w < 8; w++)
		if (g->why[w]) {
			fprintf(f, "%s%s %" PRIu64, first ? "" : ", ", ktrace_graph_untraced_name(w), g->why[w]);
			first = 0;
		}
	fputc(')', f);
}

void ktrace_diff_text_graphs(FILE *f, const struct diff_result *r)
{
	if (!r->graphs_a.execs && !r->graphs_b.execs)
		return;
	fprintf(f, "graphs: %" PRIu64 " in A (%" PRIu64 " graph launch%s), %" PRIu64 " in B (%" PRIu64
		   " graph launch%s); not traced in full: %" PRIu64 " in A", r->graphs_a.execs, r->graphs_a.launches,
		r->graphs_a.launches == 1 ? "" : "es", r->graphs_b.execs, r->graphs_b.launches,
		r->graphs_b.launches == 1 ? "" : "es", r->graphs_a.untraced);
	text_untraced(f, &r->graphs_a);
	fprintf(f, ", %" PRIu64 " in B", r->graphs_b.untraced);
	text_untraced(f, &r->graphs_b);
	fprintf(f, "%s\n", r->strict && (r->graphs_a.untraced || r->graphs_b.untraced) ? " (--strict: counted as a failure)"
										   : "");
}
