/* tools/export/export_args.c: the "args" of the timeline's slices (docs/export.md):
 * a launch's kernel, geometry and arguments with their names, values and
 * digests; a copy's or memset's fields and digests.  A field that ktrace-dump
 * --json also prints has its name and form (docs/json.md): op_seq, tid, flags
 * as lists of names, grid as [x, y, z], kernel and mangled, the graph
 * reference; values are formatted as ktrace-dump formats them (dump_param_value).
 */
#include "tools/export/export_internal.h"

#include <stdio.h>
#include <string.h>

#include "tools/model/value.h"

static void put_dim(struct jw *w, const char *key, const uint32_t d[3])
{
	jw_key(w, key);
	jw_array(w);
	for (int i = 0; i < 3; i++)
		jw_u64(w, d[i]);
	jw_end_array(w);
}

/* key: a list of the names in the comma-separated names. */
static void put_names(struct jw *w, const char *key, const char *names)
{
	jw_key(w, key);
	jw_array(w);
	for (const char *p = names; *p;) {
		size_t n = strcspn(p, ",");
		jw_strn(w, p, n);
		p += n + (p[n] == ',');
	}
	jw_end_array(w);
}

/* The graph reference of a graph launch's kernel, copy or memset, as ktrace-dump prints it. */
/* "framework_seq": {"kind", "number"}, or null. */
static void put_fw_seq(struct jw *w, uint32_t kind, uint64_t number)
{
	jw_key(w, "framework_seq");
	if (kind == KTRACE_FWSEQ_NONE) {
		jw_raw(w, "null");
		return;
	}
	jw_object(w);
	jw_key(w, "kind");
	jw_str(w, ktrace_fw_seq_kind_name(kind));
	jw_key(w, "number");
	jw_u64(w, number);
	jw_end_object(w);
}

static void put_graph_ref(struct jw *w, const struct ktrace_graph_ref *g)
{
	jw_key(w, "graph");
	jw_object(w);
	jw_key(w, "exec_id");
	jw_u64(w, g->exec_id);
	jw_key(w, "graph_id");
	jw_u64(w, g->graph_id);
	jw_key(w, "launch");
	jw_u64(w, g->launch);
	jw_key(w, "op_seq");
	jw_u64(w, g->launch_seq);
	jw_key(w, "node");
	jw_u64(w, g->node);
	jw_key(w, "revision");
	jw_u64(w, g->revision);
	jw_end_object(w);
}

/* A record's NVTX ranges as ktrace-dump --json gives them ("range": the id,
 * whether every RANGE record of the path was found, the flags, the path
 * outermost first, the framework's sequence number); nothing when none was
 * open. */
static void put_range(struct jw *w, const struct ktrace_ranges *ranges, const struct ktrace_range_ref *r)
{
	const struct ktrace_range_node *n[KTRACE_RANGES_DEPTH];
	int complete;
	size_t k;
	if (!r->range)
		return;
	k = ktrace_ranges_chain(ranges, r->range, n, KTRACE_RANGES_DEPTH, &complete);
	jw_key(w, "range");
	jw_object(w);
	jw_key(w, "id");
	jw_u64(w, r->range);
	jw_key(w, "complete");
	jw_bool(w, complete);
	jw_key(w, "flags");
	jw_array(w);
	for (uint32_t b = 1; b && b <= 0x8000; b <<= 1) {
		char v[16];

		if (!(r->flags & b))
			continue;
		snprintf(v, sizeof v, "0x%x", b);
		jw_str(w, ktrace_range_ref_flag_name(b) ? ktrace_range_ref_flag_name(b) : v);
	}
	jw_end_array(w);
	jw_key(w, "path");
	jw_array(w);
	for (size_t i = 0; i < k; i++) {
		jw_object(w);
		jw_key(w, "domain");
		jw_str(w, n[i]->domain);
		jw_key(w, "message");
		jw_str(w, n[i]->message);
		jw_end_object(w);
	}
	jw_end_array(w);
	put_fw_seq(w, r->fw_seq_kind, r->fw_seq);
	jw_end_object(w);
}

/* The digests of one region, as members of the current object, named as
 * ktrace-dump names a region's. */
static void put_region(struct jw *w, const struct tm_region *g)
{
	jw_key(w, "hash_len");
	jw_u64(w, g->hash_len);
	if (g->flags & KTRACE_REGIONF_PRE) {
		jw_key(w, "pre_hash");
		jw_digest(w, g->pre_hash);
	}
	if (g->flags & KTRACE_REGIONF_POST) {
		jw_key(w, "post_hash");
		jw_digest(w, g->post_hash);
	}
	if ((g->flags & KTRACE_REGIONF_PRE) && (g->flags & KTRACE_REGIONF_POST) && g->pre_hash != g->post_hash) {
		jw_key(w, "out");
		jw_bool(w, 1);
	}
}

/* Regions of parameter p (ordinal) that do not start at its first byte
 * (pointers inside a by-value struct): "name+offset" members. */
static void put_inner_regions(struct jw *w, const struct tm_launch *l, const struct tm_param *p, const char *name)
{
	for (uint32_t i = 0; i < l->nregions; i++) {
		const struct tm_region *g = &l->regions[i];
		char key[160];
		if (g->ordinal != p->ordinal || g->param_offset == p->offset)
			continue;
		snprintf(key, sizeof key, "%s+%u", name, g->param_offset - p->offset);
		jw_key(w, key);
		jw_object(w);
		jw_key(w, "value");
		jw_hex(w, g->ptr);
		put_region(w, g);
		jw_end_object(w);
	}
}

/* Regions in no known parameter (the kernel's layout is unknown): "@offset". */
static void put_loose_regions(struct jw *w, const struct tm_launch *l)
{
	for (uint32_t i = 0; i < l->nregions; i++) {
		const struct tm_region *g = &l->regions[i];
		char key[32];
		if (ktrace_tm_param_at(l->kernel, g->param_offset))
			continue;
		snprintf(key, sizeof key, "@%u", g->param_offset);
		jw_key(w, key);
		jw_object(w);
		jw_key(w, "value");
		jw_hex(w, g->ptr);
		put_region(w, g);
		jw_end_object(w);
	}
}

/* Each parameter: {"type", "value", and for a pointer its digests}. */
static void put_params(struct jw *w, const struct tm_launch *l)
{
	const struct tm_kernel *k = l->kernel;
	char value[640], name[128];
	jw_key(w, "arguments");
	jw_object(w);
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
		for (uint32_t r = 0; r < l->nregions && !own; r++)
			if (l->regions[r].ordinal == p->ordinal && l->regions[r].param_offset == p->offset)
				own = &l->regions[r];
		jw_key(w, name);
		jw_object(w);
		jw_key(w, "type");
		jw_str(w, p->type);
		jw_key(w, "value");
		jw_raw(w, ktrace_param_value(&d, l->param_bytes, l->param_bytes_len, 1, value, sizeof value));
		if (own)
			put_region(w, own);
		jw_end_object(w);
		put_inner_regions(w, l, p, name);
	}
	put_loose_regions(w, l);
	jw_end_object(w);
}

/* Names of the arguments whose bytes the launch changed ("out,c"), or "". */
static void written_names(const struct tm_launch *l, char *buf, size_t cap)
{
	size_t o = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < l->nregions && o + 1 < cap; i++) {
		const struct tm_region *g = &l->regions[i];
		const struct tm_param *p = ktrace_tm_param_at(l->kernel, g->param_offset);
		if (!(g->flags & KTRACE_REGIONF_PRE) || !(g->flags & KTRACE_REGIONF_POST) || g->pre_hash == g->post_hash)
			continue;
		if (p && *p->name)
			o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? "," : "", p->name);
		else
			o += (size_t)snprintf(buf + o, cap - o, "%s@%u", o ? "," : "", g->param_offset);
	}
}

void ktrace_export_launch_args(struct jw *w, const struct ktrace_ranges *ranges, const struct tm_launch *l,
			       const struct export_mark *m, const struct export_measure *gpu)
{
	const struct tm_kernel *k = l->kernel;
	char flags[256], out[512];
	jw_key(w, "args");
	jw_object(w);
	jw_key(w, "op_seq");
	jw_u64(w, l->seq);
	jw_key(w, "kernel");
	if (k->known)
		jw_str(w, ktrace_tm_kernel_name(k));
	else
		jw_raw(w, "null");
	jw_key(w, "mangled");
	if (k->known)
		jw_str(w, k->name);
	else
		jw_raw(w, "null");
	if (m) {
		jw_key(w, "divergence");
		jw_str(w, m->detail ? m->detail : m->label);
	}
	put_dim(w, "grid", l->grid);
	put_dim(w, "block", l->block);
	if (l->cluster[0] || l->cluster[1] || l->cluster[2])
		put_dim(w, "cluster", l->cluster);
	jw_key(w, "shared_mem");
	jw_u64(w, l->shared_mem);
	jw_key(w, "stream");
	jw_hex(w, l->stream);
	jw_key(w, "context");
	jw_hex(w, l->context);
	jw_key(w, "device");
	jw_i64(w, l->device);
	jw_key(w, "tid");
	jw_u64(w, l->tid);
	put_names(w, "launch_flags", ktrace_flag_names(l->flags, ktrace_launch_flag_name, flags, sizeof flags, ","));
	if (l->result) {
		jw_key(w, "result");
		jw_i64(w, l->result);
	}
	if (l->flags & KTRACE_LAUNCHF_GRAPH)
		put_graph_ref(w, &l->graph);
	put_range(w, ranges, &l->range);
	written_names(l, out, sizeof out);
	if (*out)
		put_names(w, "out", out);
	if (gpu) {
		put_params(w, l);
		ktrace_export_gpu_time(w, gpu);
	}
	jw_end_object(w);
}

void ktrace_export_gpu_time(struct jw *w, const struct export_measure *gpu)
{
	static const char *const how[] = { "unmeasured", "measured", "graph_launch_measured" };
	const struct tm_gputime *g = gpu->gt;
	jw_key(w, "gpu_time");
	jw_str(w, how[gpu->how]);
	if (!g)
		return;
	jw_key(w, "gputime");
	jw_object(w);
	jw_key(w, "op_seq");
	jw_u64(w, g->op_seq);
	jw_key(w, "start_ns");
	jw_u64(w, g->start_ns);
	jw_key(w, "end_ns");
	jw_u64(w, g->end_ns);
	jw_key(w, "duration_ns");
	jw_u64(w, g->end_ns - g->start_ns);
	jw_key(w, "ref_err_ns");
	jw_u64(w, g->ref_err_ns);
	jw_end_object(w);
}

const char *ktrace_export_copy_dir(uint32_t dir)
{
	static const char *const names[] = { "", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP" };
	return dir < sizeof names / sizeof names[0] ? names[dir] : "";
}

static void put_copy_fields(struct jw *w, const struct tm_op *o)
{
	jw_key(w, "dir");
	jw_str(w, ktrace_copy_dir_name(o->dir));
	if (o->dir_inferred) {
		jw_key(w, "dir_inferred");
		jw_bool(w, 1);
	}
	jw_key(w, "src");
	jw_hex(w, o->src);
	if (o->flags & KTRACE_COPYF_SRC_DIGEST) {
		jw_key(w, "src_digest");
		jw_digest(w, o->src_digest);
	}
	if (ktrace_dst_digest_valid(o->dst_digest_state)) {
		jw_key(w, "dst_digest");
		jw_digest(w, o->dst_digest);
	}
	if (o->dst_digest_state) {
		jw_key(w, "dst_digest_state");
		jw_str(w, ktrace_dst_digest_state_name(o->dst_digest_state));
	}
}

void ktrace_export_op_args(struct jw *w, const struct ktrace_ranges *ranges, const struct tm_op *o,
			   const struct export_measure *gpu)
{
	char flags[160];
	jw_key(w, "args");
	jw_object(w);
	jw_key(w, "op_seq");
	jw_u64(w, o->seq);
	jw_key(w, "bytes");
	jw_u64(w, o->bytes);
	jw_key(w, "dst");
	jw_hex(w, o->dst);
	if (o->type == TM_OP_MEMCPY) {
		put_copy_fields(w, o);
	} else {
		jw_key(w, "value");
		jw_hex(w, o->value);
		jw_key(w, "count");
		jw_u64(w, o->elem_size ? o->bytes / o->elem_size : o->bytes);
		jw_key(w, "elem_size");
		jw_u64(w, o->elem_size);
	}
	jw_key(w, "stream");
	jw_hex(w, o->stream);
	jw_key(w, "context");
	jw_hex(w, o->context);
	jw_key(w, "tid");
	jw_u64(w, o->tid);
	put_names(w, "copy_flags", ktrace_flag_names(o->flags, ktrace_copy_flag_name, flags, sizeof flags, ","));
	if (o->result) {
		jw_key(w, "result");
		jw_i64(w, o->result);
	}
	if (o->flags & KTRACE_COPYF_GRAPH)
		put_graph_ref(w, &o->graph);
	put_range(w, ranges, &o->range);
	if (gpu)
		ktrace_export_gpu_time(w, gpu);
	jw_end_object(w);
}

void ktrace_export_range_args(struct jw *w, const struct ktrace_ranges *ranges, const struct export_range_slice *r)
{
	char path[2048];
	jw_key(w, "args");
	jw_object(w);
	jw_key(w, "range_id");
	jw_u64(w, r->node->id);
	jw_key(w, "kind");
	jw_str(w, ktrace_range_kind_name(r->node->kind));
	jw_key(w, "path");
	jw_str(w, ktrace_ranges_path(ranges, r->node->id, path, sizeof path));
	put_fw_seq(w, r->fw_seq_kind, r->fw_seq);
	jw_end_object(w);
}
