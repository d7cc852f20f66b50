/* tools/dump_graph.c: ktrace-dump's printing of GRAPH records (an executable
 * CUDA graph's nodes and edges, docs/format.md "GRAPH") and of the graph
 * reference a launch, copy or memset of a graph launch carries, as text and
 * as JSON fields.
 */
#include "tools/dump_internal.h"

#include <string.h>

/* ---- text ----------------------------------------------------------------------- */

void dump_text_graph_ref(FILE *f, const struct ktrace_graph_ref *g)
{
	fprintf(f, "  graph exec %llu launch %llu node %u revision %u (graph %llu, graph launch from op %llu)\n",
		as_ull(g->exec_id), as_ull(g->launch), g->node, g->revision, as_ull(g->graph_id), as_ull(g->launch_seq));
}

static void text_node_body(FILE *f, const struct ktrace_graph_node *n)
{
	switch (n->kind) {
	case KTRACE_GNODE_KERNEL:
		fprintf(f, " kernel %llu grid %ux%ux%u block %ux%ux%u", as_ull(n->kernel_id), n->grid[0], n->grid[1],
			n->grid[2], n->block[0], n->block[1], n->block[2]);
		if (n->cluster[0] || n->cluster[1] || n->cluster[2])
			fprintf(f, " cluster %ux%ux%u", n->cluster[0], n->cluster[1], n->cluster[2]);
		fprintf(f, " smem %u params ", n->shared_mem);
		dump_put_hex(f, n->param_bytes, n->param_bytes_len);
		break;
	case KTRACE_GNODE_MEMCPY:
		fprintf(f, " %s %llu bytes dst 0x%llx src 0x%llx", ktrace_copy_dir_name(n->dir), as_ull(n->bytes),
			as_ull(n->dst), as_ull(n->src));
		break;
	case KTRACE_GNODE_MEMSET:
		fprintf(f, " dst 0x%llx count %llu x %u bytes value 0x%llx", as_ull(n->dst), as_ull(n->count),
			n->elem_size, as_ull(n->value));
		break;
	case KTRACE_GNODE_CHILD:
		fprintf(f, " graph %llu", as_ull(n->child_graph_id));
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
			as_ull(n.handle));
		if (n.parent != KTRACE_GRAPH_NO_PARENT)
			fprintf(f, " in node %u", n.parent);
		text_node_body(f, &n);
		if (n.flags)
			fprintf(f, " (%s)", ktrace_flag_names(n.flags, ktrace_graph_node_flag_name, fl, sizeof fl, ","));
		fputc('\n', f);
	}
	return 0;
}

int dump_text_graph(FILE *f, unsigned long long seq, const void *rec, size_t len)
{
	struct ktrace_rec_graph g;
	if (ktrace_decode_graph(rec, len, &g))
		return -1;
	fprintf(f, "graph exec %llu revision %u seq %llu: %s of graph %llu, %u nodes, %u edges", as_ull(g.exec_id),
		g.revision, seq, ktrace_graph_cause_name(g.cause), as_ull(g.graph_id), g.nodes_total, g.edges_total);
	if (g.nnodes != g.nodes_total || g.nedges != g.edges_total)
		fprintf(f, " (this part: nodes from %u, %u; edges from %u, %u)", g.node_first, g.nnodes, g.edge_first,
			g.nedges);
	fprintf(f, ", ctx 0x%llx dev %d tid %u flags 0x%llx%s", as_ull(g.context), g.device, g.tid,
		as_ull(g.instantiate_flags), (g.flags & KTRACE_GRAPHF_HASHED) ? " hashed" : "");
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

/* ---- JSON ------------------------------------------------------------------------ */

void dump_json_graph_ref(FILE *f, const struct ktrace_graph_ref *g, int valid)
{
	if (!valid)
		return;
	/* op_seq: the operation number of the graph launch (docs/json.md) */
	fprintf(f, ",\"graph\":{\"exec_id\":%llu,\"graph_id\":%llu,\"launch\":%llu,\"op_seq\":%llu,"
		   "\"node\":%u,\"revision\":%u}", as_ull(g->exec_id), as_ull(g->graph_id), as_ull(g->launch),
		as_ull(g->launch_seq), g->node, g->revision);
}

static void json_node_body(FILE *f, const struct ktrace_graph_node *n)
{
	char fl[64];

	switch (n->kind) {
	case KTRACE_GNODE_KERNEL:
		fprintf(f, ",\"kernel_id\":%llu,\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"cluster\":[%u,%u,%u],"
			   "\"shared_mem\":%u,\"param_bytes\":\"", as_ull(n->kernel_id), n->grid[0], n->grid[1],
			n->grid[2], n->block[0], n->block[1], n->block[2], n->cluster[0], n->cluster[1], n->cluster[2],
			n->shared_mem);
		dump_put_hex(f, n->param_bytes, n->param_bytes_len);
		fputc('"', f);
		break;
	case KTRACE_GNODE_MEMCPY:
		ktrace_flag_names(n->copy_flags, ktrace_copy_flag_name, fl, sizeof fl, "\",\"");
		fprintf(f, ",\"dir\":\"%s\",\"dst\":\"0x%llx\",\"src\":\"0x%llx\",\"bytes\":%llu,"
			   "\"copy_flags\":[%s%s%s]", ktrace_copy_dir_name(n->dir), as_ull(n->dst), as_ull(n->src),
			as_ull(n->bytes), fl[0] ? "\"" : "", fl, fl[0] ? "\"" : "");
		break;
	case KTRACE_GNODE_MEMSET:
		ktrace_flag_names(n->copy_flags, ktrace_copy_flag_name, fl, sizeof fl, "\",\"");
		fprintf(f, ",\"dst\":\"0x%llx\",\"value\":\"0x%llx\",\"count\":%llu,\"elem_size\":%u,"
			   "\"copy_flags\":[%s%s%s]", as_ull(n->dst), as_ull(n->value), as_ull(n->count), n->elem_size,
			fl[0] ? "\"" : "", fl, fl[0] ? "\"" : "");
		break;
	case KTRACE_GNODE_CHILD:
		fprintf(f, ",\"child_graph_id\":%llu", as_ull(n->child_graph_id));
		break;
	default:
		break;
	}
}

int dump_json_graph_nodes(FILE *f, const struct ktrace_rec_graph *g)
{
	uint32_t off = 0;
	char fl[96];

	fputs(",\"nodes\":[", f);
	for (uint32_t i = 0; i < g->nnodes; i++) {
		struct ktrace_graph_node n;
		if (ktrace_graph_node_next(g, &off, &n))
			return -1;
		fprintf(f, "%s{\"index\":%u,\"kind\":\"%s\",\"flags\":[", i ? "," : "", g->node_first + i,
			ktrace_graph_node_kind_name(n.kind));
		ktrace_flag_names(n.flags, ktrace_graph_node_flag_name, fl, sizeof fl, "\",\"");
		if (fl[0])
			fprintf(f, "\"%s\"", fl);
		fprintf(f, "],\"handle\":\"0x%llx\"", as_ull(n.handle));
		if (n.parent != KTRACE_GRAPH_NO_PARENT)
			fprintf(f, ",\"parent\":%u", n.parent);
		else
			fputs(",\"parent\":null", f);
		json_node_body(f, &n);
		fputc('}', f);
	}
	fputc(']', f);
	return 0;
}

void dump_json_graph_edges(FILE *f, const struct ktrace_rec_graph *g)
{
	fputs(",\"edges\":[", f);
	for (uint32_t i = 0; i < g->nedges; i++) {
		struct ktrace_graph_edge e;
		ktrace_graph_edge_get(g, i, &e);
		fprintf(f, "%s[%u,%u]", i ? "," : "", e.from, e.to);
	}
	fputc(']', f);
}
