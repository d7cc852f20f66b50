/* tools/export/export_args.c: the "args" of the timeline's slices (docs/export.md):
 * a launch's kernel, geometry and arguments with their names, values and
 * digests; a copy's or memset's fields and digests.  A field that ktrace-dump
 * --json also prints has its name and form (docs/json.md): op_seq, tid, flags
 * as lists of names, grid as [x, y, z], kernel and mangled, the graph
 * reference; values are formatted as ktrace-dump formats them (ktrace_param_value).
 */
#include "tools/export/export_internal.h"

#include <stdio.h>
#include <string.h>

#include "tools/model/record_json.h"
#include "tools/model/value.h"

/* "framework_seq": {"kind", "number"}, or null. */
static void put_fw_seq(struct json_writer *w, uint32_t kind, uint64_t number)
{
	if (kind == KTRACE_FWSEQ_NONE) {
		ktrace_json_null(w, "framework_seq");
		return;
	}
	ktrace_json_object(w, "framework_seq");
	ktrace_json_str(w, "kind", ktrace_fw_seq_kind_name(kind));
	ktrace_json_u64(w, "number", number);
	ktrace_json_end(w);
}

/* A record's NVTX ranges as ktrace-dump --json gives them (tools/model/record_json.h);
 * nothing when none was open. */
static void put_range(struct json_writer *w, const struct ktrace_ranges *ranges, const struct ktrace_range_ref *r)
{
	if (!r->range)
		return;
	ktrace_json_object(w, "range");
	ktrace_record_json_range_members(w, ranges, r);
	ktrace_json_end(w);
}

/* A launch's, copy's or memset's result when the call failed, its graph
 * launch's node (graph: it has one) and its NVTX ranges. */
static void put_refs(struct json_writer *w, const struct ktrace_ranges *ranges, int32_t result, int graph,
		     const struct ktrace_graph_ref *g, const struct ktrace_range_ref *r)
{
	if (result)
		ktrace_json_i64(w, "result", result);
	if (graph)
		ktrace_record_json_graph_ref(w, g);
	put_range(w, ranges, r);
}

/* The digests of one region of a launch of t, as members of the current
 * object, named as ktrace-dump names a region's. */
static void put_region(struct json_writer *w, const struct tm_trace *t, const struct tm_region *g)
{
	ktrace_json_u64(w, "hash_len", ktrace_tm_region_hash_len(t, g));
	if (g->flags & KTRACE_REGIONF_PRE)
		ktrace_json_digest(w, "pre_hash", g->pre_hash);
	if (g->flags & KTRACE_REGIONF_POST)
		ktrace_json_digest(w, "post_hash", g->post_hash);
	if ((g->flags & KTRACE_REGIONF_PRE) && (g->flags & KTRACE_REGIONF_POST) && g->pre_hash != g->post_hash)
		ktrace_json_bool(w, "out", 1);
}

/* Regions of parameter p (ordinal) that do not start at its first byte
 * (pointers inside a by-value struct): "name+offset" members. */
static void put_inner_regions(struct json_writer *w, const struct tm_trace *t, const struct tm_launch *l,
			      const struct tm_param *p, const char *name)
{
	for (uint32_t i = 0; i < l->look->nregions; i++) {
		const struct tm_region *g = &l->regions[i];
		char key[160];
		if (g->ordinal != p->ordinal || g->param_offset == p->offset)
			continue;
		snprintf(key, sizeof key, "%s+%u", name, g->param_offset - p->offset);
		ktrace_json_object(w, key);
		ktrace_json_hex(w, "value", ktrace_tm_region_ptr(t, g));
		put_region(w, t, g);
		ktrace_json_end(w);
	}
}

/* Regions in no known parameter (the kernel's layout is unknown): "@offset". */
static void put_loose_regions(struct json_writer *w, const struct tm_trace *t, const struct tm_launch *l)
{
	for (uint32_t i = 0; i < l->look->nregions; i++) {
		const struct tm_region *g = &l->regions[i];
		char key[32];
		if (ktrace_tm_param_at(l->look->kernel, g->param_offset))
			continue;
		snprintf(key, sizeof key, "@%u", g->param_offset);
		ktrace_json_object(w, key);
		ktrace_json_hex(w, "value", ktrace_tm_region_ptr(t, g));
		put_region(w, t, g);
		ktrace_json_end(w);
	}
}

/* Each parameter: {"type", "value", and for a pointer its digests}. */
static void put_params(struct json_writer *w, const struct tm_trace *t, const struct tm_launch *l)
{
	const struct tm_kernel *k = l->look->kernel;
	char value[640], name[128];
	ktrace_json_object(w, "arguments");
	for (uint32_t i = 0; i < k->nparams; i++) {
		const struct tm_param *p = &k->params[i];
		struct ktrace_param_desc d = { .ordinal = p->ordinal, .kind = p->kind, .offset = p->offset,
					       .size = p->size, .flags = p->flags,
					       .type = { p->type, (uint16_t)strnlen(p->type, 65535) } };
		const struct tm_region *own = NULL;
		if (*p->name)
			snprintf(name, sizeof name, "%s", p->name);
		else
			snprintf(name, sizeof name, "arg%u", p->ordinal);
		for (uint32_t r = 0; r < l->look->nregions && !own; r++)
			if (l->regions[r].ordinal == p->ordinal && l->regions[r].param_offset == p->offset)
				own = &l->regions[r];
		ktrace_json_object(w, name);
		ktrace_json_str(w, "type", p->type);
		ktrace_json_raw(w, "value", ktrace_param_value(&d, ktrace_tm_param_bytes(l), l->look->param_bytes_len, 1,
							       value, sizeof value));
		if (own)
			put_region(w, t, own);
		ktrace_json_end(w);
		put_inner_regions(w, t, l, p, name);
	}
	put_loose_regions(w, t, l);
	ktrace_json_end(w);
}

/* Names of the arguments whose bytes the launch changed ("out,c"), or "". */
static void written_names(const struct tm_launch *l, char *buf, size_t cap)
{
	size_t o = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < l->look->nregions && o + 1 < cap; i++) {
		const struct tm_region *g = &l->regions[i];
		const struct tm_param *p = ktrace_tm_param_at(l->look->kernel, g->param_offset);
		if (!(g->flags & KTRACE_REGIONF_PRE) || !(g->flags & KTRACE_REGIONF_POST) || g->pre_hash == g->post_hash)
			continue;
		if (p && *p->name)
			o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? "," : "", p->name);
		else
			o += (size_t)snprintf(buf + o, cap - o, "%s@%u", o ? "," : "", g->param_offset);
	}
}

void ktrace_export_launch_args(struct json_writer *w, const struct tm_trace *t, const struct tm_launch *l,
			       const struct export_mark *m, const struct export_measure *gpu)
{
	const struct tm_kernel *k = l->look->kernel;
	char flags[256], out[512];
	ktrace_json_object(w, "args");
	ktrace_json_u64(w, "op_seq", l->seq);
	if (k->known) {
		ktrace_json_str(w, "kernel", ktrace_tm_kernel_name(k));
		ktrace_json_str(w, "mangled", k->name);
	} else {
		ktrace_json_null(w, "kernel");
		ktrace_json_null(w, "mangled");
	}
	if (m)
		ktrace_json_str(w, "divergence", m->detail ? m->detail : m->label);
	ktrace_json_dim3(w, "grid", l->look->shape.grid);
	ktrace_json_dim3(w, "block", l->look->shape.block);
	const uint32_t *cluster = ktrace_tm_cluster(l);
	if (cluster[0] || cluster[1] || cluster[2])
		ktrace_json_dim3(w, "cluster", cluster);
	KTRACE_JSON_MEMBERS(w, JSON_U64("shared_mem", l->look->shape.shared_mem), JSON_HEX("stream", l->look->stream),
			    JSON_HEX("context", l->look->context), JSON_I64("device", l->look->device),
			    JSON_U64("tid", l->look->tid));
	ktrace_json_names(w, "launch_flags", ktrace_flag_names(l->flags, ktrace_launch_flag_name, flags, sizeof flags, ","));
	put_refs(w, &t->ranges, l->look->result, (l->flags & KTRACE_LAUNCHF_GRAPH) != 0, ktrace_tm_graph_ref(l),
		 ktrace_tm_range_ref(l));
	written_names(l, out, sizeof out);
	if (*out)
		ktrace_json_names(w, "out", out);
	if (gpu) {
		put_params(w, t, l);
		ktrace_export_gpu_time(w, gpu);
	}
	ktrace_json_end(w);
}

void ktrace_export_gpu_time(struct json_writer *w, const struct export_measure *gpu)
{
	static const char *const how[] = { "unmeasured", "measured", "graph_launch_measured" };
	const struct tm_gputime *g = gpu->gt;
	ktrace_json_str(w, "gpu_time", how[gpu->how]);
	if (!g)
		return;
	ktrace_json_object(w, "gputime");
	KTRACE_JSON_MEMBERS(w, JSON_U64("op_seq", g->op_seq), JSON_U64("start_ns", g->start_ns),
			    JSON_U64("end_ns", g->end_ns), JSON_U64("duration_ns", g->end_ns - g->start_ns),
			    JSON_U64("ref_err_ns", g->ref_err_ns));
	ktrace_json_end(w);
}

const char *ktrace_export_copy_dir(uint32_t dir)
{
	static const char *const names[] = { "", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP" };
	return dir < sizeof names / sizeof names[0] ? names[dir] : "";
}

static void put_copy_fields(struct json_writer *w, const struct tm_op *o)
{
	ktrace_json_str(w, "dir", ktrace_copy_dir_name(o->dir));
	if (o->dir_inferred)
		ktrace_json_bool(w, "dir_inferred", 1);
	ktrace_json_hex(w, "src", o->src);
	if (o->flags & KTRACE_COPYF_SRC_DIGEST)
		ktrace_json_digest(w, "src_digest", o->src_digest);
	if (ktrace_dst_digest_valid(o->dst_digest_state))
		ktrace_json_digest(w, "dst_digest", o->dst_digest);
	if (o->dst_digest_state)
		ktrace_json_str(w, "dst_digest_state", ktrace_dst_digest_state_name(o->dst_digest_state));
}

void ktrace_export_op_args(struct json_writer *w, const struct ktrace_ranges *ranges, const struct tm_op *o,
			   const struct export_measure *gpu)
{
	char flags[160];
	ktrace_json_object(w, "args");
	ktrace_json_u64(w, "op_seq", o->seq);
	ktrace_json_u64(w, "bytes", o->bytes);
	ktrace_json_hex(w, "dst", o->dst);
	if (o->type == TM_OP_MEMCPY) {
		put_copy_fields(w, o);
	} else {
		ktrace_json_hex(w, "value", o->value);
		ktrace_json_u64(w, "count", o->elem_size ? o->bytes / o->elem_size : o->bytes);
		ktrace_json_u64(w, "elem_size", o->elem_size);
	}
	ktrace_json_hex(w, "stream", o->stream);
	ktrace_json_hex(w, "context", o->context);
	ktrace_json_u64(w, "tid", o->tid);
	ktrace_json_names(w, "copy_flags", ktrace_flag_names(o->flags, ktrace_copy_flag_name, flags, sizeof flags, ","));
	put_refs(w, ranges, o->result, (o->flags & KTRACE_COPYF_GRAPH) != 0, &o->graph, &o->range);
	if (gpu)
		ktrace_export_gpu_time(w, gpu);
	ktrace_json_end(w);
}

void ktrace_export_range_args(struct json_writer *w, const struct ktrace_ranges *ranges, const struct export_range_slice *r)
{
	char path[2048];
	ktrace_json_object(w, "args");
	ktrace_json_u64(w, "range_id", r->node->id);
	ktrace_json_str(w, "kind", ktrace_range_kind_name(r->node->kind));
	ktrace_json_str(w, "path", ktrace_ranges_path(ranges, r->node->id, path, sizeof path));
	put_fw_seq(w, r->fw_seq_kind, r->fw_seq);
	ktrace_json_end(w);
}
