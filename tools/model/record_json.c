/* tools/model/record_json.c: a record as one JSON line (record_json.h), for
 * ktrace-dump --json and the Python reader: every field, as the record table
 * (format/record_table.def) lists and names them; its hooks (a record's
 * variable parts: regions, arguments, graph nodes, NVTX range paths, Python
 * frames, a replay's report; the fields derived from other records) are here.  Pointers, handles and digests are hex strings ("0x..."
 * and 16-digit digests) so 64-bit values survive JavaScript and pandas;
 * counts and sizes are numbers.
 */
#include "tools/model/record_json.h"

#include "tools/model/json_writer.h"
#include "tools/model/ranges.h"
#include "tools/model/unverified.h"
#include "tools/model/value.h"

#include "format/record_table.h"
#include "format/replay_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ,"key":value members: a number, a hex string "0x..." (pointers, handles),
 * a 16-digit digest string, a JSON string, a list of names. */
static void json_put_u64(FILE *f, const char *k, uint64_t v)
{
	fprintf(f, ",\"%s\":%llu", k, ktrace_ull(v));
}

static void json_put_i64(FILE *f, const char *k, int64_t v)
{
	fprintf(f, ",\"%s\":%lld", k, (long long)v);
}

static void json_put_hex(FILE *f, const char *k, uint64_t v)
{
	fprintf(f, ",\"%s\":\"0x%llx\"", k, ktrace_ull(v));
}

static void json_put_digest(FILE *f, const char *k, uint64_t v)
{
	fprintf(f, ",\"%s\":\"%016llx\"", k, ktrace_ull(v));
}

static void json_put_str(FILE *f, const char *k, struct ktrace_str s)
{
	fprintf(f, ",\"%s\":", k);
	ktrace_json_put_string(f, s.ptr, s.len);
}

static void json_put_cstr(FILE *f, const char *k, const char *s)
{
	fprintf(f, ",\"%s\":", k);
	ktrace_json_put_string(f, s, strlen(s));
}

/* names: comma-separated, as format/'s ktrace_flag_names writes them. */
static void json_put_name_list(FILE *f, const char *k, const char *names)
{
	fprintf(f, ",\"%s\":[", k);
	int first = 1;
	for (const char *p = names; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		fprintf(f, "%s", first ? "" : ",");
		ktrace_json_put_string(f, p, n);
		first = 0;
		p += n + (e ? 1 : 0);
	}
	fputc(']', f);
}

static void json_region(const struct record_ctx *c, FILE *f, const struct ktrace_region *g)
{
	const char *extent = ktrace_region_extent_name(c->exactness_known, g);
	char fl[96];
	fprintf(f, "{\"param_offset\":%u,\"ordinal\":%u", g->param_offset, g->ordinal);
	json_put_name_list(f, "flags", ktrace_flag_names(g->flags, ktrace_region_flag_name, fl, sizeof fl, ","));
	json_put_hex(f, "ptr", g->ptr);
	json_put_hex(f, "alloc_base", g->alloc_base);
	json_put_u64(f, "alloc_size", g->alloc_size);
	json_put_u64(f, "hash_len", g->hash_len);
	if (extent)
		json_put_cstr(f, "extent", extent);
	else
		fputs(",\"extent\":null", f);
	if (g->flags & KTRACE_REGIONF_PRE)
		json_put_digest(f, "pre_hash", g->pre_hash);
	else
		fputs(",\"pre_hash\":null", f);
	if (g->flags & KTRACE_REGIONF_POST)
		json_put_digest(f, "post_hash", g->post_hash);
	else
		fputs(",\"post_hash\":null", f);
	fprintf(f, ",\"out\":%s}", ktrace_region_out(g) ? "true" : "false");
}

static void json_param_desc(FILE *f, const struct ktrace_param_desc *d)
{
	char fl[64] = "";
	size_t o = 0;
	if (d->flags & KTRACE_PARAMF_CONST)
		o += (size_t)snprintf(fl + o, sizeof fl - o, "%sconst", o ? "," : "");
	if (d->flags & KTRACE_PARAMF_SCRATCH)
		o += (size_t)snprintf(fl + o, sizeof fl - o, "%sscratch", o ? "," : "");
	if (d->flags & KTRACE_PARAMF_HIDDEN)
		snprintf(fl + o, sizeof fl - o, "%shidden", o ? "," : "");
	fprintf(f, "{\"ordinal\":%u", d->ordinal);
	json_put_str(f, "name", d->name);
	json_put_str(f, "type", d->type);
	json_put_cstr(f, "kind", ktrace_param_kind_name(d->kind));
	json_put_cstr(f, "name_source", ktrace_name_source_name(d->name_source));
	json_put_u64(f, "offset", d->offset);
	json_put_u64(f, "size", d->size);
	json_put_name_list(f, "flags", fl);
}

/* Why the record alone cannot be verified: "unverifiable" (the reasons'
 * names, as ktrace-diff gives them) and "unverifiable_text"; nothing when
 * there is no such reason. */
static void json_unverifiable(FILE *f, const struct ktrace_rec_launch *l)
{
	uint32_t m = ktrace_unv_record_mask(l);
	char names[256], why[512];
	size_t o = 0;

	if (!m)
		return;
	names[0] = '\0';
	for (int r = 1; r < KTRACE_UNV_COUNT; r++)
		if (m & (1u << r))
			o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", o ? "," : "", ktrace_unv_name(r));
	json_put_name_list(f, "unverifiable", names);
	json_put_cstr(f, "unverifiable_text", ktrace_unv_record_text(l, m, why, sizeof why));
}

/* ---- graphs and NVTX ranges -------------------------------------------------------- */

static void json_graph_ref(FILE *f, const struct ktrace_graph_ref *g, int valid)
{
	if (!valid)
		return;
	/* op_seq: the operation number of the graph launch (docs/json.md) */
	fprintf(f, ",\"graph\":{\"exec_id\":%llu,\"graph_id\":%llu,\"launch\":%llu,\"op_seq\":%llu,"
		   "\"node\":%u,\"revision\":%u}", ktrace_ull(g->exec_id), ktrace_ull(g->graph_id), ktrace_ull(g->launch),
		ktrace_ull(g->launch_seq), g->node, g->revision);
}

static void json_graph_node_body(FILE *f, const struct ktrace_graph_node *n)
{
	char fl[64];

	switch (n->kind) {
	case KTRACE_GNODE_KERNEL:
		fprintf(f, ",\"kernel_id\":%llu,\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"cluster\":[%u,%u,%u],"
			   "\"shared_mem\":%u,\"param_bytes\":\"", ktrace_ull(n->kernel_id), n->grid[0], n->grid[1],
			n->grid[2], n->block[0], n->block[1], n->block[2], n->cluster[0], n->cluster[1], n->cluster[2],
			n->shared_mem);
		ktrace_put_hex(f, n->param_bytes, n->param_bytes_len);
		fputc('"', f);
		break;
	case KTRACE_GNODE_MEMCPY:
		ktrace_flag_names(n->copy_flags, ktrace_copy_flag_name, fl, sizeof fl, "\",\"");
		fprintf(f, ",\"dir\":\"%s\",\"dst\":\"0x%llx\",\"src\":\"0x%llx\",\"bytes\":%llu,"
			   "\"copy_flags\":[%s%s%s]", ktrace_copy_dir_name(n->dir), ktrace_ull(n->dst), ktrace_ull(n->src),
			ktrace_ull(n->bytes), fl[0] ? "\"" : "", fl, fl[0] ? "\"" : "");
		break;
	case KTRACE_GNODE_MEMSET:
		ktrace_flag_names(n->copy_flags, ktrace_copy_flag_name, fl, sizeof fl, "\",\"");
		fprintf(f, ",\"dst\":\"0x%llx\",\"value\":\"0x%llx\",\"count\":%llu,\"elem_size\":%u,"
			   "\"copy_flags\":[%s%s%s]", ktrace_ull(n->dst), ktrace_ull(n->value), ktrace_ull(n->count), n->elem_size,
			fl[0] ? "\"" : "", fl, fl[0] ? "\"" : "");
		break;
	case KTRACE_GNODE_CHILD:
		fprintf(f, ",\"child_graph_id\":%llu", ktrace_ull(n->child_graph_id));
		break;
	default:
		break;
	}
}

static int json_graph_nodes(FILE *f, const struct ktrace_rec_graph *g)
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
		fprintf(f, "],\"handle\":\"0x%llx\"", ktrace_ull(n.handle));
		if (n.parent != KTRACE_GRAPH_NO_PARENT)
			fprintf(f, ",\"parent\":%u", n.parent);
		else
			fputs(",\"parent\":null", f);
		json_graph_node_body(f, &n);
		fputc('}', f);
	}
	fputc(']', f);
	return 0;
}

static void json_graph_edges(FILE *f, const struct ktrace_rec_graph *g)
{
	fputs(",\"edges\":[", f);
	for (uint32_t i = 0; i < g->nedges; i++) {
		struct ktrace_graph_edge e;
		ktrace_graph_edge_get(g, i, &e);
		fprintf(f, "%s[%u,%u]", i ? "," : "", e.from, e.to);
	}
	fputc(']', f);
}

static void json_range_ref(FILE *f, const struct record_ctx *c, const struct ktrace_range_ref *r, int valid)
{
	const struct ktrace_range_node *n[KTRACE_RANGES_DEPTH];
	int complete;
	size_t k;

	if (!valid)
		return;
	k = ktrace_ranges_chain(c->ranges, r->range, n, KTRACE_RANGES_DEPTH, &complete);
	fprintf(f, ",\"range\":{\"id\":%u,\"complete\":%s,\"flags\":[", r->range, complete ? "true" : "false");
	for (uint32_t b = 1, first = 1; b && b <= 0x8000; b <<= 1) {
		if (!(r->flags & b))
			continue;
		if (ktrace_range_ref_flag_name(b))
			fprintf(f, "%s\"%s\"", first ? "" : ",", ktrace_range_ref_flag_name(b));
		else
			fprintf(f, "%s\"0x%x\"", first ? "" : ",", b);
		first = 0;
	}
	fputs("],\"path\":[", f);
	for (size_t i = 0; i < k; i++) {
		fputs(i ? ",{\"domain\":" : "{\"domain\":", f);
		ktrace_json_put_string(f, n[i]->domain, strlen(n[i]->domain));
		fputs(",\"message\":", f);
		ktrace_json_put_string(f, n[i]->message, strlen(n[i]->message));
		fputc('}', f);
	}
	fputs("],\"framework_seq\":", f);
	if (r->fw_seq_kind == KTRACE_FWSEQ_NONE)
		fputs("null}", f);
	else
		fprintf(f, "{\"kind\":\"%s\",\"number\":%llu}}", ktrace_fw_seq_kind_name(r->fw_seq_kind), ktrace_ull(r->fw_seq));
}

static void json_py_frames(FILE *f, const struct ktrace_rec_pystack *r)
{
	struct ktrace_py_frame fr;
	uint32_t off = 0;

	fputs(",\"frames\":[", f);
	for (uint32_t i = 0; i < r->nframes && !ktrace_pystack_frame_next(r, &off, &fr); i++) {
		fputs(i ? ",{\"file\":" : "{\"file\":", f);
		ktrace_json_put_string(f, fr.file.ptr, fr.file.len);
		fprintf(f, ",\"line\":%u,\"function\":", fr.line);
		ktrace_json_put_string(f, fr.function.ptr, fr.function.len);
		fputc('}', f);
	}
	fputc(']', f);
}

/* ---- the variable parts and derived fields (the table's hooks) ------------------- */

static void json_kernel_names(FILE *f, const struct ktrace_rec_kernel *k)
{
	if (k) {
		/* as every tool names a kernel it refers to: the name the reports print, and the symbol */
		json_put_str(f, "kernel", k->demangled.len ? k->demangled : k->name);
	} else {
		fputs(",\"kernel\":null", f);
	}
}

static void json_args(FILE *f, const struct ktrace_rec_launch *l, const struct ktrace_rec_kernel *k)
{
	uint32_t n = k ? k->nparams : 0;

	fputs(",\"args\":[", f);
	for (uint32_t i = 0; i < n; i++) {
		struct ktrace_param_desc d;
		char val[512];
		if (ktrace_kernel_param(k, i, &d))
			continue;
		fputs(i ? "," : "", f);
		json_param_desc(f, &d);
		fprintf(f, ",\"value\":%s}", ktrace_param_value(&d, l->param_bytes, l->param_bytes_len, 1, val, sizeof val));
	}
	fputc(']', f);
}

static void json_regions(const struct record_ctx *c, FILE *f, const struct ktrace_rec_launch *l)
{
	fputs(",\"regions\":[", f);
	for (uint32_t i = 0; i < l->nregions; i++) {
		struct ktrace_region g;
		ktrace_launch_region(l, i, &g);
		fputs(i ? "," : "", f);
		json_region(c, f, &g);
	}
	fputc(']', f);
}

static int json_params(FILE *f, const struct ktrace_rec_kernel *kr)
{
	fputs(",\"params\":[", f);
	for (uint32_t i = 0; i < kr->nparams; i++) {
		struct ktrace_param_desc d;
		if (ktrace_kernel_param(kr, i, &d))
			return -1;
		fputs(i ? "," : "", f);
		json_param_desc(f, &d);
		fputc('}', f);
	}
	fputc(']', f);
	return 0;
}

static void json_counters(FILE *f, const struct ktrace_rec_counters *r)
{
	fputs(",\"counters\":{", f);
	for (uint32_t i = 0; i < r->ncounters; i++) {
		struct ktrace_counter c;
		ktrace_counters_get(r, i, &c);
		const char *nm = ktrace_counter_name(c.id);
		if (strcmp(nm, "unknown"))
			fprintf(f, "%s\"%s\":%llu", i ? "," : "", nm, ktrace_ull(c.value));
		else
			fprintf(f, "%s\"counter%u\":%llu", i ? "," : "", c.id, ktrace_ull(c.value));
	}
	fputc('}', f);
}

/* A measure that may be infinite (a NaN against a number): null then. */
static void json_put_measure(FILE *f, const char *k, double v)
{
	if (isfinite(v))
		fprintf(f, ",\"%s\":%.17g", k, v);
	else
		fprintf(f, ",\"%s\":null", k);
}

static void json_replay_buffer(FILE *f, const struct ktrace_replay_buffer_result *b)
{
	const struct ktrace_replay_diff *d = &b->diff;

	fputs("{\"name\":", f);
	ktrace_json_put_string(f, b->name, strlen(b->name));
	json_put_cstr(f, "param_type", b->type);
	json_put_cstr(f, "elem", ktrace_replay_elem_name(b->elem));
	json_put_u64(f, "arg_index", b->arg_index);
	json_put_hex(f, "base", b->base);
	json_put_u64(f, "bytes", b->size);
	json_put_cstr(f, "copy_place", ktrace_replay_place_name(b->place));
	json_put_digest(f, "digest_r0", b->digest_r0);
	json_put_u64(f, "replays_differing", b->replays_differing);
	json_put_u64(f, "elements", d->elements);
	json_put_u64(f, "differing", d->differing);
	json_put_u64(f, "nan_mismatches", d->nan_mismatches);
	json_put_measure(f, "max_abs", d->max_abs);
	json_put_measure(f, "max_rel", d->max_rel);
	json_put_u64(f, "max_ulp", d->max_ulp);
	fputs(",\"first\":[", f);
	for (uint32_t k = 0; k < d->nfirst; k++)
		fprintf(f, "%s%llu", k ? "," : "", ktrace_ull(d->first[k]));
	fputs("]}", f);
}

/* REPLAY: the report's fields, after op_seq and kernel_id. */
static int json_replay_report(FILE *f, const struct ktrace_rec_replay *r, const struct ktrace_rec_kernel *k)
{
	struct ktrace_replay_report rep;
	char *para;
	size_t n;

	if (ktrace_replay_report_parse(r->blob, r->blob_len, &rep))
		return -1;
	/* the record names the kernel by its symbol; the name the reports print comes from its KERNEL record */
	if (k && k->demangled.len)
		json_put_str(f, "kernel", k->demangled);
	else
		json_put_cstr(f, "kernel", rep.kernel ? rep.kernel : "");
	json_put_cstr(f, "mangled", rep.kernel ? rep.kernel : "");
	json_put_u64(f, "occurrence", rep.occurrence);
	json_put_cstr(f, "outcome", ktrace_replay_outcome_key(rep.outcome));
	json_put_cstr(f, "reason", ktrace_replay_reason_text(rep.reason));
	json_put_cstr(f, "detail", rep.detail);
	json_put_i64(f, "launch_result", rep.launch_result);
	json_put_i64(f, "driver_error", rep.driver_error);
	json_put_u64(f, "runs_requested", rep.runs_requested);
	json_put_u64(f, "runs_done", rep.runs_done);
	json_put_u64(f, "distinct", rep.distinct);
	json_put_u64(f, "bytes_device", rep.bytes_device);
	json_put_u64(f, "bytes_host", rep.bytes_host);
	json_put_u64(f, "total_ns", rep.total_ns);
	fputs(",\"buffers\":[", f);
	for (uint32_t i = 0; i < rep.nbuffers; i++) {
		fputs(i ? "," : "", f);
		json_replay_buffer(f, &rep.buffers[i]);
	}
	fputc(']', f);
	n = ktrace_replay_report_format(&rep, NULL, 0);
	para = malloc(n + 1);
	if (para) {
		ktrace_replay_report_format(&rep, para, n + 1);
		fputs(",\"text\":", f);
		ktrace_json_put_string(f, para, n);
	}
	free(para);
	ktrace_replay_report_free(&rep);
	return 0;
}

/* The graph and range references a launch, copy or memset carries (by its flags). */
static void json_refs(const struct record_ctx *c, FILE *f, enum ktrace_hook h, uint16_t type,
		      const union ktrace_any_record *u)
{
	const struct ktrace_graph_ref *g = type == KTRACE_REC_LAUNCH ? &u->launch.graph
					 : type == KTRACE_REC_MEMCPY ? &u->memcpy.graph : &u->memset.graph;
	const struct ktrace_range_ref *r = type == KTRACE_REC_LAUNCH ? &u->launch.range
					 : type == KTRACE_REC_MEMCPY ? &u->memcpy.range : &u->memset.range;
	uint32_t flags = type == KTRACE_REC_LAUNCH ? u->launch.flags
		       : type == KTRACE_REC_MEMCPY ? u->memcpy.flags : u->memset.flags;
	uint32_t gflag = type == KTRACE_REC_LAUNCH ? KTRACE_LAUNCHF_GRAPH : KTRACE_COPYF_GRAPH;
	uint32_t rflag = type == KTRACE_REC_LAUNCH ? KTRACE_LAUNCHF_RANGE : KTRACE_COPYF_RANGE;

	if (h == KT_HOOK_GRAPH_REF)
		json_graph_ref(f, g, (flags & gflag) != 0);
	else
		json_range_ref(f, c, r, (flags & rflag) != 0);
}

/* One derived field or variable part (a KT_SHOW_HOOK entry of the record table). */
static int json_hook(const struct record_ctx *c, FILE *f, enum ktrace_hook h, uint16_t type,
		     const union ktrace_any_record *u, const struct ktrace_rec_kernel *k)
{
	switch (h) {
	case KT_HOOK_FORMAT_VERSION: fprintf(f, ",\"format\":\"%u.%u\"", c->format_major, c->format_minor); return 0;
	case KT_HOOK_DATA_HEX:
		fputs(",\"data_hex\":\"", f);
		ktrace_put_hex(f, u->module_image.bytes, u->module_image.chunk_len);
		fputc('"', f);
		return 0;
	case KT_HOOK_KERNEL_STRINGS:
		json_put_str(f, "name", u->kernel.name);
		json_put_str(f, "demangled", u->kernel.demangled);
		return 0;
	case KT_HOOK_PARAMS: return json_params(f, &u->kernel);
	case KT_HOOK_KERNEL_NAME: json_kernel_names(f, k); return 0;
	case KT_HOOK_KERNEL_MANGLED:
		if (k)
			json_put_str(f, "mangled", k->name);
		else
			fputs(",\"mangled\":null", f);
		return 0;
	case KT_HOOK_UNVERIFIABLE: json_unverifiable(f, &u->launch); return 0;
	case KT_HOOK_GRAPH_REF:
	case KT_HOOK_RANGE_REF: json_refs(c, f, h, type, u); return 0;
	case KT_HOOK_PARAM_BYTES:
		fputs(",\"param_bytes\":\"", f);
		ktrace_put_hex(f, u->launch.param_bytes, u->launch.param_bytes_len);
		fputc('"', f);
		return 0;
	case KT_HOOK_ARGS: json_args(f, &u->launch, k); return 0;
	case KT_HOOK_REGIONS: json_regions(c, f, &u->launch); return 0;
	case KT_HOOK_COUNTERS: json_counters(f, &u->counters); return 0;
	case KT_HOOK_REPLAY_REPORT: return json_replay_report(f, &u->replay, k);
	case KT_HOOK_GRAPH_HASHED:
		fprintf(f, ",\"hashed\":%s", (u->graph.flags & KTRACE_GRAPHF_HASHED) ? "true" : "false");
		return 0;
	case KT_HOOK_GRAPH_NODES: return json_graph_nodes(f, &u->graph);
	case KT_HOOK_GRAPH_EDGES: json_graph_edges(f, &u->graph); return 0;
	case KT_HOOK_RANGE_SOURCE: json_put_str(f, "source", u->range.source); return 0;
	case KT_HOOK_PY_FRAMES: json_py_frames(f, &u->pystack); return 0;
	case KT_HOOK_DURATION:
		json_put_u64(f, "duration_ns", u->gputime.end_ns >= u->gputime.start_ns
						       ? u->gputime.end_ns - u->gputime.start_ns : 0);
		return 0;
	default: return 0;
	}
}

/* ---- the record table's fields --------------------------------------------------------- */

static void json_flags_field(FILE *f, const struct ktrace_field *fd, uint64_t v)
{
	char names[512];

	json_put_name_list(f, fd->name, ktrace_flag_names(v, fd->names, names, sizeof names, ","));
}

/* One fixed field or string of a decoded record, as the table says to show it. */
static void json_field(FILE *f, const struct ktrace_field *fd, const union ktrace_any_record *u)
{
	uint64_t v = ktrace_field_value(fd, u, 0);

	if (fd->valid && !fd->valid(u)) {
		if (fd->absent == KT_ABSENT_NULL)
			fprintf(f, ",\"%s\":null", fd->name);
		return;
	}
	switch (fd->show) {
	case KT_SHOW_NUM: json_put_u64(f, fd->name, v); break;
	case KT_SHOW_INT: json_put_i64(f, fd->name, (int64_t)v); break;
	case KT_SHOW_HEX: json_put_hex(f, fd->name, v); break;
	case KT_SHOW_DIGEST: json_put_digest(f, fd->name, v); break;
	case KT_SHOW_ENUM: json_put_cstr(f, fd->name, fd->names((uint32_t)v)); break;
	case KT_SHOW_FLAGS: json_flags_field(f, fd, v); break;
	case KT_SHOW_STR: json_put_str(f, fd->name, ktrace_field_str(fd, u)); break;
	case KT_SHOW_SHAPE:
		fprintf(f, ",\"%s\":[%llu,%llu,%llu]", fd->name, ktrace_ull(v), ktrace_ull(ktrace_field_value(fd, u, 1)),
			ktrace_ull(ktrace_field_value(fd, u, 2)));
		break;
	default: break;
	}
}

/* The record's own fields, as the record table lists them; -1 when it does not decode. */
static int json_fields(const struct record_ctx *c, FILE *f, const struct ktrace_record_prefix *p, const void *rec,
		       size_t len, const struct ktrace_rec_kernel *k)
{
	const struct ktrace_record_desc *d = ktrace_record_desc(p->type);
	union ktrace_any_record u;

	if (!d) {
		json_put_u64(f, "type_id", p->type);
		return 0;
	}
	if (d->decode(rec, len, &u))
		return -1;
	for (uint16_t i = 0; i < d->nfields; i++) {
		const struct ktrace_field *fd = &d->fields[i];
		if (fd->show == KT_SHOW_HOOK) {
			if (json_hook(c, f, fd->hook, p->type, &u, k))
				return -1;
		} else if (fd->show != KT_SHOW_HIDDEN) {
			json_field(f, fd, &u);
		}
	}
	return 0;
}

int ktrace_record_json(const struct record_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len,
		     const struct ktrace_rec_kernel *k)
{
	FILE *f = c->out;
	/* The fields go to memory first, so a malformed record still gives one
	 * well-formed line. */
	char *body = NULL;
	size_t blen = 0;
	int rc = -1;
	FILE *m = open_memstream(&body, &blen);
	if (m) {
		rc = json_fields(c, m, p, rec, len, k);
		if (fclose(m))
			rc = -1;
	}
	const char *tn = ktrace_record_type_name(p->type);
	fputs("{\"type\":", f);
	ktrace_json_put_string(f, tn, strlen(tn));
	json_put_u64(f, "seq", p->seq);
	json_put_u64(f, "time_ns", p->time_ns);
	json_put_u64(f, "size", len);
	if (p->flags) {
		char fl[200];
		json_put_name_list(f, "record_flags", ktrace_flag_names(p->flags, NULL, fl, sizeof fl, ","));
	}
	json_put_cstr(f, "file", c->file);
	if (rc == 0 && body)
		fwrite(body, 1, blen, f);
	else
		fputs(",\"malformed\":true", f);
	fputs("}\n", f);
	free(body);
	return rc;
}
