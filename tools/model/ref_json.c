/* tools/model/ref_json.c: the references a launch, copy or memset carries, as
 * JSON (record_json.h): its graph launch's node ("graph") and its NVTX ranges
 * ("range").  ktrace-dump --json, the timeline's arguments and the diff's
 * report give them alike.
 */
#include "tools/model/record_json.h"

#include "tools/model/json_writer.h"
#include "tools/model/ranges.h"

void ktrace_record_json_graph_ref(struct json_writer *w, const struct ktrace_graph_ref *g)
{
	ktrace_json_object(w, "graph");
	/* op_seq: the operation number of the graph launch (docs/json.md) */
	KTRACE_JSON_MEMBERS(w, JSON_U64("exec_id", g->exec_id), JSON_U64("graph_id", g->graph_id),
			    JSON_U64("launch", g->launch), JSON_U64("op_seq", g->launch_seq), JSON_U64("node", g->node),
			    JSON_U64("revision", g->revision));
	ktrace_json_end(w);
}

void ktrace_record_json_graph_iter(struct json_writer *w, const struct ktrace_graph_ref *g)
{
	ktrace_json_object(w, "iteration");
	KTRACE_JSON_MEMBERS(w, JSON_U64("iteration", g->iteration), JSON_U64("cond_node", g->cond_node),
			    JSON_U64("body", g->body), JSON_U64("iterations", g->iterations),
			    JSON_U64("dropped", g->dropped));
	if (g->outer_iteration != KTRACE_GRAPH_NO_ITERATION)
		ktrace_json_u64(w, "outer_iteration", g->outer_iteration);
	else
		ktrace_json_null(w, "outer_iteration");
	ktrace_json_end(w);
}

void ktrace_record_json_range_members(struct json_writer *w, const struct ktrace_ranges *ranges,
				      const struct ktrace_range_ref *r)
{
	const struct ktrace_range_node *n[KTRACE_RANGES_DEPTH];
	int complete;
	size_t k = ktrace_ranges_chain(ranges, r->range, n, KTRACE_RANGES_DEPTH, &complete);

	ktrace_json_u64(w, "id", r->range);
	ktrace_json_bool(w, "complete", complete);
	ktrace_json_array(w, "flags");
	for (uint32_t b = 1; b && b <= 0x8000; b <<= 1) {
		char v[16];

		if (!(r->flags & b))
			continue;
		snprintf(v, sizeof v, "0x%x", b);
		ktrace_json_str(w, NULL, ktrace_range_ref_flag_name(b) ? ktrace_range_ref_flag_name(b) : v);
	}
	ktrace_json_end(w);
	ktrace_json_array(w, "path");
	for (size_t i = 0; i < k; i++) {
		ktrace_json_object(w, NULL);
		ktrace_json_str(w, "domain", n[i]->domain);
		ktrace_json_str(w, "message", n[i]->message);
		ktrace_json_end(w);
	}
	ktrace_json_end(w);
	if (r->fw_seq_kind == KTRACE_FWSEQ_NONE) {
		ktrace_json_null(w, "framework_seq");
		return;
	}
	ktrace_json_object(w, "framework_seq");
	ktrace_json_str(w, "kind", ktrace_fw_seq_kind_name(r->fw_seq_kind));
	ktrace_json_u64(w, "number", r->fw_seq);
	ktrace_json_end(w);
}
