/* tools/model/record_json.c: a record as one JSON line (record_json.h), for
 * ktrace-dump --json and the Python reader: every field, as the record table
 * (format/record_table.def) lists and names them; its hooks (a record's
 * variable parts: regions, arguments, graph nodes, NVTX range paths, Python
 * frames, a replay's report; the fields derived from other records) are here.
 * Pointers, handles and digests are hex strings ("0x..." and 16-digit
 * digests) so 64-bit values survive JavaScript and pandas; counts and sizes
 * are numbers.
 */
#include "tools/model/record_json.h"

#include <stdlib.h>
#include <string.h>

#include "format/record_table.h"
#include "format/replay_report.h"
#include "tools/model/json_writer.h"
#include "tools/model/ranges.h"
#include "tools/model/unverified.h"
#include "tools/model/value.h"

/* A string of the record (not NUL-terminated). */
static void json_rstr(struct json_writer *w, const char *key, struct ktrace_str s)
{
	ktrace_json_strn(w, key, s.ptr, s.len);
}

/* A string member of a kernel or of the file that every launch repeats: the
 * JSON of the last few kept (with the bytes they are of, compared each time). */
#define STR_SLOTS 64
#define STR_SLOT_MAX 256
static void json_rstr_kept(struct json_writer *w, const char *key, const char *p, size_t n)
{
	static _Thread_local struct {
		size_t n, json_len;
		char raw[STR_SLOT_MAX];
		char json[STR_SLOT_MAX];
	} slots[STR_SLOTS];
	unsigned h = (unsigned)(((uintptr_t)p * 0x9e3779b97f4a7c15ull + n) >> 11) % STR_SLOTS;

	if (n > STR_SLOT_MAX) {
		ktrace_json_strn(w, key, p, n);
		return;
	}
	if (slots[h].n != n || !slots[h].json_len || memcmp(slots[h].raw, p, n)) {
		struct json_writer tw;

		slots[h].json_len = 0;
		ktrace_json_init_mem(&tw, JSON_COMPACT, NULL, 0);
		ktrace_json_strn(&tw, NULL, p, n);
		if (!tw.oom && tw.len < STR_SLOT_MAX) {
			memcpy(slots[h].raw, p, n);
			memcpy(slots[h].json, tw.buf, tw.len);
			slots[h].json[tw.len] = '\0';
			slots[h].n = n;
			slots[h].json_len = tw.len;
		}
		free(tw.buf);
		if (!slots[h].json_len) {
			ktrace_json_strn(w, key, p, n);
			return;
		}
	}
	ktrace_json_raw(w, key, slots[h].json);
}

/* A string member, or null without one. */
static void json_str_or_null(struct json_writer *w, const char *key, const char *s)
{
	if (s)
		ktrace_json_str(w, key, s);
	else
		ktrace_json_null(w, key);
}

/* Flags as an array of their names: the JSON of the last few (names, value)
 * kept, a dump writing the same few flag sets millions of times. */
#define FLAGS_SLOTS 64
static void json_flags(struct json_writer *w, const char *key, uint64_t v, const char *(*names)(uint32_t bit))
{
	static _Thread_local struct {
		const char *(*names)(uint32_t bit);
		uint64_t v;
		char json[200];
	} slots[FLAGS_SLOTS];
	unsigned h = (unsigned)((v * 0x9e3779b97f4a7c15ull + (uintptr_t)names) >> 7) % FLAGS_SLOTS;
	char text[512];

	if (slots[h].names != names || slots[h].v != v) {
		struct json_writer tw;

		ktrace_json_init_mem(&tw, JSON_COMPACT, NULL, 0);
		ktrace_json_names(&tw, NULL, ktrace_flag_names(v, names, text, sizeof text, ","));
		slots[h].names = NULL;
		if (!tw.oom && tw.len < sizeof slots[h].json) {
			memcpy(slots[h].json, tw.buf, tw.len);
			slots[h].json[tw.len] = '\0';
			slots[h].names = names;
			slots[h].v = v;
		}
		free(tw.buf);
		if (!slots[h].names) {
			ktrace_json_names(w, key, ktrace_flag_names(v, names, text, sizeof text, ","));
			return;
		}
	}
	ktrace_json_raw(w, key, slots[h].json);
}

static void json_region(const struct record_ctx *c, struct json_writer *w, const struct ktrace_region *g)
{
	ktrace_json_object(w, NULL);
	ktrace_json_u64(w, "param_offset", g->param_offset);
	ktrace_json_u64(w, "ordinal", g->ordinal);
	json_flags(w, "flags", g->flags, ktrace_region_flag_name);
	KTRACE_JSON_MEMBERS(w, JSON_HEX("ptr", g->ptr), JSON_HEX("alloc_base", g->alloc_base),
			    JSON_U64("alloc_size", g->alloc_size), JSON_U64("hash_len", g->hash_len));
	json_str_or_null(w, "extent", ktrace_region_extent_name(c->exactness_known, g));
	if (g->flags & KTRACE_REGIONF_PRE)
		ktrace_json_digest(w, "pre_hash", g->pre_hash);
	else
		ktrace_json_null(w, "pre_hash");
	if (g->flags & KTRACE_REGIONF_PRE_CARRIED)
		ktrace_json_u64(w, "pre_from", g->pre_from);
	if (g->flags & KTRACE_REGIONF_POST)
		ktrace_json_digest(w, "post_hash", g->post_hash);
	else
		ktrace_json_null(w, "post_hash");
	ktrace_json_bool(w, "out", ktrace_region_out(g));
	ktrace_json_end(w);
}

/* A parameter's description, as members of the open object. */
static void json_param_desc(struct json_writer *w, const struct ktrace_param_desc *d)
{
	char fl[64];

	ktrace_json_u64(w, "ordinal", d->ordinal);
	json_rstr(w, "name", d->name);
	json_rstr(w, "type", d->type);
	ktrace_json_str(w, "kind", ktrace_param_kind_name(d->kind));
	ktrace_json_str(w, "name_source", ktrace_name_source_name(d->name_source));
	ktrace_json_u64(w, "offset", d->offset);
	ktrace_json_u64(w, "size", d->size);
	ktrace_json_names(w, "flags", ktrace_param_flag_names(d->flags, ",", fl, sizeof fl));
	if (d->written) { /* since 1.14: left out when unknown */
		ktrace_json_str(w, "written", ktrace_param_written_name(d->written));
		ktrace_json_str(w, "written_source", ktrace_written_source_name(d->written_source));
	}
}

/* Why the record alone cannot be verified: "unverifiable" (the reasons'
 * names, as ktrace-diff gives them) and "unverifiable_text"; nothing when
 * there is no such reason. */
static void json_unverifiable(struct json_writer *w, const struct ktrace_rec_launch *l)
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
	ktrace_json_names(w, "unverifiable", names);
	ktrace_json_str(w, "unverifiable_text", ktrace_unv_record_text(l, m, why, sizeof why));
}

/* ---- graphs, NVTX ranges, Python stacks ----------------------------------------------- */

static void json_graph_node_body(struct json_writer *w, const struct ktrace_graph_node *n)
{
	char fl[64];

	switch (n->kind) {
	case KTRACE_GNODE_KERNEL:
		ktrace_json_u64(w, "kernel_id", n->kernel_id);
		ktrace_json_dim3(w, "grid", n->grid);
		ktrace_json_dim3(w, "block", n->block);
		ktrace_json_dim3(w, "cluster", n->cluster);
		ktrace_json_u64(w, "shared_mem", n->shared_mem);
		ktrace_json_hex_bytes(w, "param_bytes", n->param_bytes, n->param_bytes_len);
		break;
	case KTRACE_GNODE_MEMCPY:
		ktrace_json_str(w, "dir", ktrace_copy_dir_name(n->dir));
		ktrace_json_hex(w, "dst", n->dst);
		ktrace_json_hex(w, "src", n->src);
		ktrace_json_u64(w, "bytes", n->bytes);
		ktrace_json_names(w, "copy_flags", ktrace_flag_names(n->copy_flags, ktrace_copy_flag_name, fl, sizeof fl, ","));
		break;
	case KTRACE_GNODE_MEMSET:
		ktrace_json_hex(w, "dst", n->dst);
		ktrace_json_hex(w, "value", n->value);
		ktrace_json_u64(w, "count", n->count);
		ktrace_json_u64(w, "elem_size", n->elem_size);
		ktrace_json_names(w, "copy_flags", ktrace_flag_names(n->copy_flags, ktrace_copy_flag_name, fl, sizeof fl, ","));
		break;
	case KTRACE_GNODE_CHILD:
		ktrace_json_u64(w, "child_graph_id", n->child_graph_id);
		break;
	case KTRACE_GNODE_CONDITIONAL:
		if (!n->cond_size) /* its bodies not described (or a file before 1.14) */
			break;
		ktrace_json_str(w, "cond_type", ktrace_cond_type_name(n->cond_type));
		ktrace_json_hex(w, "cond_handle", n->cond_handle);
		ktrace_json_u64(w, "bodies", n->cond_size);
		ktrace_json_u64(w, "default", n->cond_default);
		ktrace_json_names(w, "cond_flags", ktrace_flag_names(n->cond_flags, ktrace_cond_flag_name, fl, sizeof fl, ","));
		break;
	default:
		break;
	}
}

static int json_graph_nodes(struct json_writer *w, const struct ktrace_rec_graph *g)
{
	uint32_t off = 0;
	char fl[96];

	ktrace_json_array(w, "nodes");
	for (uint32_t i = 0; i < g->nnodes; i++) {
		struct ktrace_graph_node n;

		if (ktrace_graph_node_next(g, &off, &n))
			return -1;
		ktrace_json_object(w, NULL);
		ktrace_json_u64(w, "index", g->node_first + i);
		ktrace_json_str(w, "kind", ktrace_graph_node_kind_name(n.kind));
		ktrace_json_names(w, "flags", ktrace_flag_names(n.flags, ktrace_graph_node_flag_name, fl, sizeof fl, ","));
		ktrace_json_hex(w, "handle", n.handle);
		if (n.parent != KTRACE_GRAPH_NO_PARENT)
			ktrace_json_u64(w, "parent", n.parent);
		else
			ktrace_json_null(w, "parent");
		if (n.flags & KTRACE_GNODEF_IN_CONDITIONAL)
			ktrace_json_u64(w, "body", n.body);
		json_graph_node_body(w, &n);
		ktrace_json_end(w);
	}
	ktrace_json_end(w);
	return 0;
}

static void json_graph_edges(struct json_writer *w, const struct ktrace_rec_graph *g)
{
	ktrace_json_array(w, "edges");
	for (uint32_t i = 0; i < g->nedges; i++) {
		struct ktrace_graph_edge e;

		ktrace_graph_edge_get(g, i, &e);
		ktrace_json_array(w, NULL);
		ktrace_json_u64(w, NULL, e.from);
		ktrace_json_u64(w, NULL, e.to);
		ktrace_json_end(w);
	}
	ktrace_json_end(w);
}

static void json_py_frames(struct json_writer *w, const struct ktrace_rec_pystack *r)
{
	struct ktrace_py_frame fr;
	uint32_t off = 0;

	ktrace_json_array(w, "frames");
	for (uint32_t i = 0; i < r->nframes && !ktrace_pystack_frame_next(r, &off, &fr); i++) {
		ktrace_json_object(w, NULL);
		json_rstr(w, "file", fr.file);
		ktrace_json_u64(w, "line", fr.line);
		json_rstr(w, "function", fr.function);
		ktrace_json_end(w);
	}
	ktrace_json_end(w);
}

/* ---- the variable parts and derived fields (the table's hooks) ------------------- */

static void json_kernel_names(struct json_writer *w, const struct ktrace_rec_kernel *k)
{
	/* as every tool names a kernel it refers to: the name the reports print, and the symbol */
	if (k)
		json_rstr_kept(w, "kernel", (k->demangled.len ? k->demangled : k->name).ptr,
			       (k->demangled.len ? k->demangled : k->name).len);
	else
		ktrace_json_null(w, "kernel");
}

/* The JSON of a kernel's parameter descriptions, all but each argument's
 * value, made once per kernel (not per launch): a slot per kernel id,
 * valid while the kernel's parameter table is byte-for-byte the same. */
#define DESC_SLOTS 256
struct desc_cache {
	uint8_t *raw;		/* the kernel's params_raw it was made from */
	uint32_t raw_len, nparams;
	char *text;		/* the members of each parameter's object, one after another */
	size_t *end;		/* where parameter i's text ends; (size_t)-1: it does not decode */
};

static const struct desc_cache *param_descs(const struct ktrace_rec_kernel *k)
{
	static _Thread_local struct desc_cache slots[DESC_SLOTS];
	struct desc_cache *s = &slots[k->kernel_id % DESC_SLOTS];
	struct json_writer tw;
	size_t *end;
	uint8_t *raw;

	if (s->raw && s->raw_len == k->params_raw_len && s->nparams == k->nparams &&
	    !memcmp(s->raw, k->params_raw, k->params_raw_len))
		return s;
	raw = malloc(k->params_raw_len ? k->params_raw_len : 1);
	end = malloc((k->nparams ? k->nparams : 1) * sizeof *end);
	ktrace_json_init_mem(&tw, JSON_COMPACT, NULL, 0);
	for (uint32_t i = 0; raw && end && i < k->nparams; i++) {
		struct ktrace_param_desc d;

		end[i] = (size_t)-1;
		if (ktrace_kernel_param(k, i, &d))
			continue;
		tw.count[tw.depth] = 0;
		json_param_desc(&tw, &d);
		end[i] = tw.len;
	}
	if (!raw || !end || tw.oom) {
		free(raw);
		free(end);
		free(tw.buf);
		return NULL;
	}
	free(s->raw);
	free(s->text);
	free(s->end);
	memcpy(raw, k->params_raw, k->params_raw_len);
	*s = (struct desc_cache){ raw, k->params_raw_len, k->nparams, tw.buf, end };
	return s;
}

static void json_args(struct json_writer *w, const struct ktrace_rec_launch *l, const struct ktrace_rec_kernel *k)
{
	uint32_t n = k ? k->nparams : 0;
	const struct desc_cache *dc = n && w->buf ? param_descs(k) : NULL;
	size_t at = 0;

	ktrace_json_array(w, "args");
	for (uint32_t i = 0; i < n; i++) {
		struct ktrace_param_desc d;
		char val[512];

		if (ktrace_kernel_param(k, i, &d))
			continue;
		ktrace_json_object(w, NULL);
		if (dc && dc->end[i] != (size_t)-1) {
			ktrace_json_splice(w, dc->text + at, dc->end[i] - at);
			at = dc->end[i];
		} else {
			json_param_desc(w, &d);
		}
		ktrace_json_raw(w, "value", ktrace_param_value(&d, l->param_bytes, l->param_bytes_len, 1, val, sizeof val));
		ktrace_json_end(w);
	}
	ktrace_json_end(w);
}

static void json_regions(const struct record_ctx *c, struct json_writer *w, const struct ktrace_rec_launch *l)
{
	ktrace_json_array(w, "regions");
	for (uint32_t i = 0; i < l->nregions; i++) {
		struct ktrace_region g;

		ktrace_launch_region(l, i, &g);
		json_region(c, w, &g);
	}
	ktrace_json_end(w);
}

static int json_params(struct json_writer *w, const struct ktrace_rec_kernel *kr)
{
	ktrace_json_array(w, "params");
	for (uint32_t i = 0; i < kr->nparams; i++) {
		struct ktrace_param_desc d;

		if (ktrace_kernel_param(kr, i, &d))
			return -1;
		ktrace_json_object(w, NULL);
		json_param_desc(w, &d);
		ktrace_json_end(w);
	}
	ktrace_json_end(w);
	return 0;
}

static void json_counters(struct json_writer *w, const struct ktrace_rec_counters *r)
{
	ktrace_json_object(w, "counters");
	for (uint32_t i = 0; i < r->ncounters; i++) {
		struct ktrace_counter c;
		char key[32];
		const char *nm;

		ktrace_counters_get(r, i, &c);
		nm = ktrace_counter_name(c.id);
		if (!strcmp(nm, "unknown")) {
			snprintf(key, sizeof key, "counter%u", c.id);
			nm = key;
		}
		ktrace_json_u64(w, nm, c.value);
	}
	ktrace_json_end(w);
}

static void json_replay_buffer(struct json_writer *w, const struct ktrace_replay_buffer_result *b)
{
	const struct ktrace_replay_diff *d = &b->diff;

	ktrace_json_object(w, NULL);
	ktrace_json_str(w, "name", b->name);
	ktrace_json_str(w, "param_type", b->type);
	ktrace_json_str(w, "elem", ktrace_replay_elem_name(b->elem));
	KTRACE_JSON_MEMBERS(w, JSON_U64("arg_index", b->arg_index), JSON_HEX("base", b->base),
			    JSON_U64("bytes", b->size));
	ktrace_json_str(w, "copy_place", ktrace_replay_place_name(b->place));
	KTRACE_JSON_MEMBERS(w, JSON_DIGEST("digest_r0", b->digest_r0),
			    JSON_U64("replays_differing", b->replays_differing), JSON_U64("elements", d->elements),
			    JSON_U64("differing", d->differing), JSON_U64("nan_mismatches", d->nan_mismatches));
	ktrace_json_double(w, "max_abs", d->max_abs, "%.17g");
	ktrace_json_double(w, "max_rel", d->max_rel, "%.17g");
	ktrace_json_u64(w, "max_ulp", d->max_ulp);
	ktrace_json_array(w, "first");
	for (uint32_t k = 0; k < d->nfirst; k++)
		ktrace_json_u64(w, NULL, d->first[k]);
	ktrace_json_end(w);
	ktrace_json_end(w);
}

/* REPLAY: the report's fields, after op_seq and kernel_id. */
static int json_replay_report(struct json_writer *w, const struct ktrace_rec_replay *r,
			      const struct ktrace_rec_kernel *k)
{
	struct ktrace_replay_report rep;
	char *para;
	size_t n;

	if (ktrace_replay_report_parse(r->blob, r->blob_len, &rep))
		return -1;
	/* the record names the kernel by its symbol; the name the reports print comes from its KERNEL record */
	if (k && k->demangled.len)
		json_rstr(w, "kernel", k->demangled);
	else
		ktrace_json_str(w, "kernel", rep.kernel);
	ktrace_json_str(w, "mangled", rep.kernel);
	ktrace_json_u64(w, "occurrence", rep.occurrence);
	ktrace_json_str(w, "outcome", ktrace_replay_outcome_key(rep.outcome));
	ktrace_json_str(w, "reason", ktrace_replay_reason_text(rep.reason));
	ktrace_json_str(w, "detail", rep.detail);
	KTRACE_JSON_MEMBERS(w, JSON_I64("launch_result", rep.launch_result), JSON_I64("driver_error", rep.driver_error),
			    JSON_U64("runs_requested", rep.runs_requested), JSON_U64("runs_done", rep.runs_done),
			    JSON_U64("distinct", rep.distinct), JSON_U64("bytes_device", rep.bytes_device),
			    JSON_U64("bytes_host", rep.bytes_host), JSON_U64("total_ns", rep.total_ns));
	ktrace_json_array(w, "buffers");
	for (uint32_t i = 0; i < rep.nbuffers; i++)
		json_replay_buffer(w, &rep.buffers[i]);
	ktrace_json_end(w);
	n = ktrace_replay_report_format(&rep, NULL, 0);
	para = malloc(n + 1);
	if (para) {
		ktrace_replay_report_format(&rep, para, n + 1);
		ktrace_json_strn(w, "text", para, n);
	}
	free(para);
	ktrace_replay_report_free(&rep);
	return 0;
}

/* The graph and range references a launch, copy or memset carries (by its flags). */
static void json_refs(const struct record_ctx *c, struct json_writer *w, enum ktrace_hook h, uint16_t type,
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
	uint32_t iflag = type == KTRACE_REC_LAUNCH ? KTRACE_LAUNCHF_GRAPH_ITER : KTRACE_COPYF_GRAPH_ITER;

	if (h == KT_HOOK_GRAPH_REF && (flags & gflag)) {
		ktrace_record_json_graph_ref(w, g);
		if (flags & iflag)
			ktrace_record_json_graph_iter(w, g);
	} else if (h == KT_HOOK_RANGE_REF && (flags & rflag)) {
		ktrace_json_object(w, "range");
		ktrace_record_json_range_members(w, c->ranges, r);
		ktrace_json_end(w);
	}
}

/* One derived field or variable part (a KT_SHOW_HOOK entry of the record table). */
static int json_hook(const struct record_ctx *c, struct json_writer *w, enum ktrace_hook h, uint16_t type,
		     const union ktrace_any_record *u, const struct ktrace_rec_kernel *k)
{
	char text[32];

	switch (h) {
	case KT_HOOK_FORMAT_VERSION:
		snprintf(text, sizeof text, "%u.%u", c->format_major, c->format_minor);
		ktrace_json_str(w, "format", text);
		return 0;
	case KT_HOOK_DATA_HEX:
		ktrace_json_hex_bytes(w, "data_hex", u->module_image.bytes, u->module_image.chunk_len);
		return 0;
	case KT_HOOK_KERNEL_STRINGS:
		json_rstr(w, "name", u->kernel.name);
		json_rstr(w, "demangled", u->kernel.demangled);
		return 0;
	case KT_HOOK_PARAMS: return json_params(w, &u->kernel);
	case KT_HOOK_KERNEL_NAME: json_kernel_names(w, k); return 0;
	case KT_HOOK_KERNEL_MANGLED:
		if (k)
			json_rstr_kept(w, "mangled", k->name.ptr, k->name.len);
		else
			ktrace_json_null(w, "mangled");
		return 0;
	case KT_HOOK_UNVERIFIABLE: json_unverifiable(w, &u->launch); return 0;
	case KT_HOOK_GRAPH_REF:
	case KT_HOOK_RANGE_REF: json_refs(c, w, h, type, u); return 0;
	case KT_HOOK_PARAM_BYTES:
		ktrace_json_hex_bytes(w, "param_bytes", u->launch.param_bytes, u->launch.param_bytes_len);
		return 0;
	case KT_HOOK_ARGS: json_args(w, &u->launch, k); return 0;
	case KT_HOOK_REGIONS: json_regions(c, w, &u->launch); return 0;
	case KT_HOOK_COUNTERS: json_counters(w, &u->counters); return 0;
	case KT_HOOK_REPLAY_REPORT: return json_replay_report(w, &u->replay, k);
	case KT_HOOK_GRAPH_HASHED: ktrace_json_bool(w, "hashed", (u->graph.flags & KTRACE_GRAPHF_HASHED) != 0); return 0;
	case KT_HOOK_GRAPH_NODES: return json_graph_nodes(w, &u->graph);
	case KT_HOOK_GRAPH_EDGES: json_graph_edges(w, &u->graph); return 0;
	case KT_HOOK_RANGE_SOURCE: json_rstr(w, "source", u->range.source); return 0;
	case KT_HOOK_PY_FRAMES: json_py_frames(w, &u->pystack); return 0;
	case KT_HOOK_DURATION:
		ktrace_json_u64(w, "duration_ns", u->gputime.end_ns >= u->gputime.start_ns
							  ? u->gputime.end_ns - u->gputime.start_ns : 0);
		return 0;
	default: return 0;
	}
}

/* ---- the record table's fields --------------------------------------------------------- */

/* One fixed field or string of a decoded record, as the table says to show it. */
static void json_field(struct json_writer *w, const struct ktrace_field *fd, const union ktrace_any_record *u)
{
	uint64_t v = ktrace_field_value(fd, u, 0);
	char names[512];

	if (fd->valid && !fd->valid(u)) {
		if (fd->absent == KT_ABSENT_NULL)
			ktrace_json_null(w, fd->name);
		return;
	}
	switch (fd->show) {
	case KT_SHOW_NUM: ktrace_json_u64(w, fd->name, v); break;
	case KT_SHOW_INT: ktrace_json_i64(w, fd->name, (int64_t)v); break;
	case KT_SHOW_HEX: ktrace_json_hex(w, fd->name, v); break;
	case KT_SHOW_DIGEST: ktrace_json_digest(w, fd->name, v); break;
	case KT_SHOW_ENUM: ktrace_json_str(w, fd->name, fd->names((uint32_t)v)); break;
	case KT_SHOW_FLAGS:
		if (fd->names)
			json_flags(w, fd->name, v, fd->names);
		else
			ktrace_json_names(w, fd->name, ktrace_flag_names(v, fd->names, names, sizeof names, ","));
		break;
	case KT_SHOW_STR: json_rstr(w, fd->name, ktrace_field_str(fd, u)); break;
	case KT_SHOW_SHAPE:
		ktrace_json_array(w, fd->name);
		for (int i = 0; i < 3; i++)
			ktrace_json_u64(w, NULL, ktrace_field_value(fd, u, i));
		ktrace_json_end(w);
		break;
	default: break;
	}
}

/* The record's own fields, as the record table lists them; -1 when it does not decode. */
static int json_fields(const struct record_ctx *c, struct json_writer *w, const struct ktrace_record_prefix *p,
		       const void *rec, size_t len, const struct ktrace_rec_kernel *k)
{
	const struct ktrace_record_desc *d = ktrace_record_desc(p->type);
	union ktrace_any_record u;

	if (!d) {
		ktrace_json_u64(w, "type_id", p->type);
		return 0;
	}
	if (d->decode(rec, len, &u))
		return -1;
	for (uint16_t i = 0; i < d->nfields; i++) {
		const struct ktrace_field *fd = &d->fields[i];

		if (fd->show == KT_SHOW_HOOK) {
			if (json_hook(c, w, fd->hook, p->type, &u, k))
				return -1;
		} else if (fd->show != KT_SHOW_HIDDEN) {
			json_field(w, fd, &u);
		}
	}
	return 0;
}

/* The members every record has, after which its own come: its type, seq,
 * time, size and flags, and the file it is from. */
static void json_head(const struct record_ctx *c, struct json_writer *w, const struct ktrace_record_prefix *p,
		      size_t len)
{
	ktrace_json_object(w, NULL);
	ktrace_json_str(w, "type", ktrace_record_type_name(p->type));
	ktrace_json_u64(w, "seq", p->seq);
	ktrace_json_u64(w, "time_ns", p->time_ns);
	ktrace_json_u64(w, "size", len);
	if (p->flags) {
		char fl[200];

		ktrace_json_names(w, "record_flags", ktrace_flag_names(p->flags, NULL, fl, sizeof fl, ","));
	}
	json_rstr_kept(w, "file", c->file ? c->file : "", c->file ? strlen(c->file) : 0);
}

int ktrace_record_json(const struct record_ctx *c, const struct ktrace_record_prefix *p, const void *rec,
		       size_t len, const struct ktrace_rec_kernel *k)
{
	/* The line goes to memory first, so that a malformed record still gives
	 * one well-formed line: its head, and "malformed".  The buffer is kept
	 * from one record to the next. */
	static _Thread_local char *line;
	static _Thread_local size_t cap;
	struct json_writer w;
	int rc;

	ktrace_json_init_mem(&w, JSON_COMPACT, line, cap);
	json_head(c, &w, p, len);
	rc = json_fields(c, &w, p, rec, len, k);
	ktrace_json_end(&w);
	line = w.buf;
	cap = w.cap;
	if (w.oom)
		rc = -1;
	if (rc == 0) {
		fwrite_unlocked(line, 1, w.len, c->out);
	} else {
		ktrace_json_init(&w, c->out, JSON_COMPACT);
		json_head(c, &w, p, len);
		ktrace_json_bool(&w, "malformed", 1);
		ktrace_json_end(&w);
	}
	putc_unlocked('\n', c->out);
	return rc;
}
