/* tools/dump/dump_graph.c: ktrace-dump's printing of GRAPH records (an executable
 * CUDA graph's nodes and edges, docs/format.md "GRAPH") and of the graph
 * reference a launch, copy or memset of a graph launch carries, as text and
 * as JSON fields.
 */
#include "tools/dump/dump_internal.h"

#include <string.h>

/* ---- text ----------------------------------------------------------------------- */

void ktrace_dump_text_graph_ref(FILE *f, const struct ktrace_graph_ref *g)
{
	fprintf(f, "  graph exec %llu launch %llu node %u revision %u (graph %llu, graph launch from op %llu)\n",
		ktrace_ull(g->exec_id), ktrace_ull(g->launch), g->node, g->revision, ktrace_ull(g->graph_id), ktrace_ull(g->launch_seq));
}

void ktrace_dump_text_graph_iter(FILE *f, const struct ktrace_graph_ref *g)
{
	fprintf(f, "  iteration %u of %u of body %u of node %u", g->iteration, g->iterations, g->body, g->cond_node);
	if (g->outer_iteration != KTRACE_GRAPH_NO_ITERATION)
		fprintf(f, " (in iteration %u of the body around it)", g->outer_iteration);
	if (g->dropped)
		fprintf(f, ", %u iterations not recorded (KTRACE_GRAPH_ITERS)", g->dropped);
	fputc('\n', f);
}

static void text_node_body(FILE *f, const struct ktrace_graph_node *n)
{
	switch (n->kind) {
	case KTRACE_GNODE_KERNEL:
		fprintf(f, " kernel %llu grid %ux%ux%u block %ux%ux%u", ktrace_ull(n->kernel_id), n->grid[0], n->grid[1],
			n->grid[2], n->block[0], n->block[1], n->block[2]);
		if (n->cluster[0] || n->cluster[1] || n->cluster[2])
			fprintf(f, " cluster %ux%ux%u", n->cluster[0], n->cluster[1], n->cluster[2]);
		fprintf(f, " smem %u params ", n->shared_mem);
		ktrace_put_hex(f, n->param_bytes, n->param_bytes_len);
		break;
	case KTRACE_GNODE_MEMCPY:
		fprintf(f, " %s %llu bytes dst 0x%llx src 0x%llx", ktrace_copy_dir_name(n->dir), ktrace_ull(n->bytes),
			ktrace_ull(n->dst), ktrace_ull(n->src));
		break;
	case KTRACE_GNODE_MEMSET:
		fprintf(f, " dst 0x%llx count %llu x %u bytes value 0x%llx", ktrace_ull(n->dst), ktrace_ull(n->count),
			n->elem_size, ktrace_ull(n->value));
		break;
	case KTRACE_GNODE_CHILD:
		fprintf(f, " graph %llu", ktrace_ull(n->child_graph_id));
		break;
	case KTRACE_GNODE_CONDITIONAL:
		if (!n->cond_size) /* its bodies not described (or a file before 1.14) */
			break;
		fprintf(f, " %s, condition 0x%llx, %u bodies, default %u", ktrace_cond_type_name(n->cond_type),
			ktrace_ull(n->cond_handle), n->cond_size, n->cond_default);
		if (n->cond_flags & KTRACE_CONDF_ASSIGN_DEFAULT)
			fputs(" assigned at each launch", f);
		if (!(n->cond_flags & KTRACE_CONDF_DEFAULT_KNOWN))
			fputs(" (default not seen)", f);
		break;
	default:
		break;
	}
}

static int text_nodes(FILE *f, const struct ktrace_rec_graph *g)
{
	uint32_t off = 0;
	char fl[96];

	for (uint32_t i = 0; i < g->nnodes; i++) {
		struct ktrace_graph_node n;
		if (ktrace_graph_node_next(g, &off, &n))
			return -1;
		fprintf(f, "  node %u %s handle 0x%llx", g->node_first + i, ktrace_graph_node_kind_name(n.kind),
			ktrace_ull(n.handle));
		if (n.parent != KTRACE_GRAPH_NO_PARENT)
			fprintf(f, " in node %u", n.parent);
		if (n.flags & KTRACE_GNODEF_IN_CONDITIONAL)
			fprintf(f, " body %u", n.body);
		text_node_body(f, &n);
		if (n.flags)
			fprintf(f, " (%s)", ktrace_flag_names(n.flags, ktrace_graph_node_flag_name, fl, sizeof fl, ","));
		fputc('\n', f);
	}
	return 0;
}

int ktrace_dump_text_graph(FILE *f, unsigned long long seq, const void *rec, size_t len)
{
	struct ktrace_rec_graph g;
	if (ktrace_decode_graph(rec, len, &g))
		return -1;
	fprintf(f, "graph exec %llu revision %u seq %llu: %s of graph %llu, %u nodes, %u edges", ktrace_ull(g.exec_id),
		g.revision, seq, ktrace_graph_cause_name(g.cause), ktrace_ull(g.graph_id), g.nodes_total, g.edges_total);
	if (g.nnodes != g.nodes_total || g.nedges != g.edges_total)
		fprintf(f, " (this part: nodes from %u, %u; edges from %u, %u)", g.node_first, g.nnodes, g.edge_first,
			g.nedges);
	fprintf(f, ", ctx 0x%llx dev %d tid %u flags 0x%llx%s", ktrace_ull(g.context), g.device, g.tid,
		ktrace_ull(g.instantiate_flags), (g.flags & KTRACE_GRAPHF_HASHED) ? " hashed" : "");
	if (g.untraced)
		fprintf(f, " not traced in full: %s", ktrace_graph_untraced_name(g.untraced));
	fputc('\n', f);
	if (text_nodes(f, &g))
		return -1;
	if (g.nedges)
		fputs("  edges:", f);
	for (uint32_t i = 0; i < g.nedges; i++) {
		struct ktrace_graph_edge e;
		ktrace_graph_edge_get(&g, i, &e);
		fprintf(f, " %u->%u", e.from, e.to);
	}
	if (g.nedges)
		fputc('\n', f);
	return 0;
}
