/* tools/dump_json.c: ktrace-dump --json: JSON Lines, one object per record with
 * every field.  Pointers, handles and digests are hex strings ("0x..." and
 * 16-digit digests) so 64-bit values survive JavaScript and pandas; counts
 * and sizes are numbers.
 */
#include "tools/dump_internal.h"
#include "tools/unverified.h"

#include "format/replay_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ,"key":value members: a number, a hex string "0x..." (pointers, handles),
 * a 16-digit digest string, a JSON string, a list of names. */
static void json_put_u64(FILE *f, const char *k, uint64_t v)
{
	fprintf(f, ",\"%s\":%llu", k, as_ull(v));
}

static void json_put_i64(FILE *f, const char *k, int64_t v)
{
	fprintf(f, ",\"%s\":%lld", k, (long long)v);
}

static void json_put_hex(FILE *f, const char *k, uint64_t v)
{
	fprintf(f, ",\"%s\":\"0x%llx\"", k, as_ull(v));
}

static void json_put_digest(FILE *f, const char *k, uint64_t v)
{
	fprintf(f, ",\"%s\":\"%016llx\"", k, as_ull(v));
}

static void json_put_str(FILE *f, const char *k, struct ktrace_str s)
{
	fprintf(f, ",\"%s\":", k);
	dump_put_json_string(f, s.ptr, s.len);
}

static void json_put_cstr(FILE *f, const char *k, const char *s)
{
	fprintf(f, ",\"%s\":", k);
	dump_put_json_string(f, s, strlen(s));
}

/* names: comma-separated, as the flag-name helpers of dump_value.c write them. */
static void json_put_name_list(FILE *f, const char *k, const char *names)
{
	fprintf(f, ",\"%s\":[", k);
	int first = 1;
	for (const char *p = names; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		fprintf(f, "%s", first ? "" : ",");
		dump_put_json_string(f, p, n);
		first = 0;
		p += n + (e ? 1 : 0);
	}
	fputc(']', f);
}

static void json_region(const struct dump_ctx *c, FILE *f, const struct ktrace_region *g)
{
	const char *extent = dump_region_extent_name(c, g);
	char fl[96];
	fprintf(f, "{\"param_offset\":%u,\"ordinal\":%u", g->param_offset, g->ordinal);
	json_put_name_list(f, "flags", dump_region_flag_names(g->flags, fl, sizeof fl, ","));
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
	fprintf(f, ",\"out\":%s}", dump_region_out(g) ? "true" : "false");
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
	uint32_t m = dump_unverifiable(l);
	char names[256], why[512];
	size_t o = 0;

	if (!m)
		return;
	names[0] = '\0';
	for (int r = 1; r < KTRACE_UNV_COUNT; r++)
		if (m & (1u << r))
			o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", o ? "," : "", ktrace_unv_name(r));
	json_put_name_list(f, "unverifiable", names);
	json_put_cstr(f, "unverifiable_text", dump_unverifiable_text(l, m, why, sizeof why));
}

static int json_launch(const struct dump_ctx *c, FILE *f, const void *rec, size_t len, const struct dump_kernel *k)
{
	struct ktrace_rec_launch l;
	char fl[160];
	if (ktrace_decode_launch(rec, len, &l))
		return -1;
	json_put_u64(f, "op_seq", l.launch_seq);
	json_put_u64(f, "kernel_id", l.kernel_id);
	if (k) {
		/* as every tool names a kernel it refers to: the name the reports print, and the symbol */
		json_put_str(f, "kernel", k->k.demangled.len ? k->k.demangled : k->k.name);
		json_put_str(f, "mangled", k->k.name);
	} else {
		fputs(",\"kernel\":null,\"mangled\":null", f);
	}
	json_put_hex(f, "context", l.context);
	json_put_hex(f, "stream", l.stream);
	json_put_u64(f, "tid", l.tid);
	json_put_i64(f, "device", l.device);
	json_put_cstr(f, "api", dump_api_name(l.api));
	json_put_name_list(f, "launch_flags", dump_launch_flag_names(l.flags, fl, sizeof fl, ","));
	if (l.flags & KTRACE_LAUNCHF_HASH_SKIPPED)
		json_put_cstr(f, "hash_skip", ktrace_hash_skip_name(l.hash_skip));
	json_unverifiable(f, &l);
	fprintf(f, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"cluster\":[%u,%u,%u]", l.grid[0], l.grid[1],
		l.grid[2], l.block[0], l.block[1], l.block[2], l.cluster[0], l.cluster[1], l.cluster[2]);
	json_put_u64(f, "shared_mem", l.shared_mem);
	json_put_i64(f, "result", l.result);
	dump_json_graph_ref(f, &l.graph, (l.flags & KTRACE_LAUNCHF_GRAPH) != 0);
	dump_json_range_ref(f, c, &l.range, (l.flags & KTRACE_LAUNCHF_RANGE) != 0);
	fputs(",\"param_bytes\":\"", f);
	dump_put_hex(f, l.param_bytes, l.param_bytes_len);
	fputs("\",\"args\":[", f);
	uint32_t n = k ? k->k.nparams : 0;
	for (uint32_t i = 0; i < n; i++) {
		struct ktrace_param_desc d;
		char val[512];
		if (ktrace_kernel_param(&k->k, i, &d))
			continue;
		fputs(i ? "," : "", f);
		json_param_desc(f, &d);
		fprintf(f, ",\"value\":%s}", dump_param_value(&d, l.param_bytes, l.param_bytes_len, 1, val, sizeof val));
	}
	fputs("],\"regions\":[", f);
	for (uint32_t i = 0; i < l.nregions; i++) {
		struct ktrace_region g;
		ktrace_launch_region(&l, i, &g);
		fputs(i ? "," : "", f);
		json_region(c, f, &g);
	}
	fputc(']', f);
	return 0;
}

/* ---- one function per record type: the fields after "type", "seq", ... ---- */

static int json_header(const struct dump_ctx *c, FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_header h;
	char version[24];

	if (ktrace_decode_header(rec, len, &h))
		return -1;
	snprintf(version, sizeof version, "%u.%u", c->format_major, c->format_minor);
	json_put_cstr(f, "format", version);
	json_put_u64(f, "pid", h.pid);
	json_put_u64(f, "ppid", h.ppid);
	json_put_u64(f, "rank", h.rank);
	json_put_u64(f, "digest_alg", h.digest_alg);
	json_put_u64(f, "start_realtime_ns", h.start_realtime_ns);
	json_put_u64(f, "start_monotonic_ns", h.start_monotonic_ns);
	json_put_str(f, "host", h.host);
	json_put_str(f, "cmdline", h.cmdline);
	json_put_str(f, "ktrace_version", h.ktrace_version);
	json_put_str(f, "config", h.config);
	return 0;
}

static int json_module(FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_module m;
	if (ktrace_decode_module(rec, len, &m))
		return -1;
	json_put_u64(f, "module_id", m.module_id);
	json_put_hex(f, "handle", m.handle);
	json_put_digest(f, "image_digest", m.image_digest);
	json_put_u64(f, "image_size", m.image_size);
	json_put_cstr(f, "kind", dump_module_kind_name(m.kind));
	json_put_cstr(f, "source", dump_module_source_name(m.source));
	json_put_str(f, "path", m.path);
	return 0;
}

static int json_module_image(FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_module_image m;
	if (ktrace_decode_module_image(rec, len, &m))
		return -1;
	json_put_digest(f, "image_digest", m.image_digest);
	json_put_u64(f, "image_size", m.image_size);
	json_put_u64(f, "chunk_offset", m.chunk_offset);
	json_put_u64(f, "chunk_len", m.chunk_len);
	fputs(",\"data_hex\":\"", f);
	dump_put_hex(f, m.bytes, m.chunk_len);
	fputc('"', f);
	return 0;
}

static int json_kernel(FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_kernel kr;
	if (ktrace_decode_kernel(rec, len, &kr))
		return -1;
	json_put_u64(f, "kernel_id", kr.kernel_id);
	json_put_u64(f, "module_id", kr.module_id);
	json_put_hex(f, "handle", kr.handle);
	json_put_cstr(f, "layout_source", dump_layout_source_name(kr.layout_source));
	json_put_u64(f, "param_bytes", kr.param_bytes);
	json_put_str(f, "name", kr.name);
	json_put_str(f, "demangled", kr.demangled);
	fputs(",\"params\":[", f);
	for (uint32_t i = 0; i < kr.nparams; i++) {
		struct ktrace_param_desc d;
		if (ktrace_kernel_param(&kr, i, &d))
			return -1;
		fputs(i ? "," : "", f);
		json_param_desc(f, &d);
		fputc('}', f);
	}
	fputc(']', f);
	return 0;
}

static int json_alloc(FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_alloc a;
	if (ktrace_decode_alloc(rec, len, &a))
		return -1;
	json_put_hex(f, "base", a.base);
	json_put_u64(f, "bytes", a.size);
	json_put_hex(f, "stream", a.stream);
	json_put_i64(f, "device", a.device);
	json_put_cstr(f, "kind", dump_alloc_kind_name(a.kind));
	return 0;
}

static int json_free(FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_free a;
	if (ktrace_decode_free(rec, len, &a))
		return -1;
	json_put_hex(f, "base", a.base);
	json_put_u64(f, "bytes", a.size);
	json_put_hex(f, "stream", a.stream);
	json_put_cstr(f, "kind", dump_alloc_kind_name(a.kind));
	return 0;
}

static int json_memcpy(const struct dump_ctx *c, FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_memcpy m;
	char fl[64];

	if (ktrace_decode_memcpy(rec, len, &m))
		return -1;
	json_put_u64(f, "op_seq", m.op_seq);
	json_put_cstr(f, "dir", dump_copy_dir_name(m.dir));
	json_put_hex(f, "dst", m.dst);
	json_put_hex(f, "src", m.src);
	json_put_u64(f, "bytes", m.bytes);
	json_put_hex(f, "stream", m.stream);
	json_put_hex(f, "context", m.context);
	if (m.flags & KTRACE_COPYF_SRC_DIGEST)
		json_put_digest(f, "src_digest", m.src_digest);
	else
		fputs(",\"src_digest\":null", f);
	if (ktrace_dst_digest_valid(m.dst_digest_state))
		json_put_digest(f, "dst_digest", m.dst_digest);
	else
		fputs(",\"dst_digest\":null", f);
	json_put_cstr(f, "dst_digest_state", dump_dst_digest_state_name(m.dst_digest_state));
	json_put_name_list(f, "copy_flags", dump_copy_flag_names(m.flags, fl, sizeof fl, ","));
	json_put_u64(f, "tid", m.tid);
	json_put_i64(f, "result", m.result);
	dump_json_graph_ref(f, &m.graph, (m.flags & KTRACE_COPYF_GRAPH) != 0);
	dump_json_range_ref(f, c, &m.range, (m.flags & KTRACE_COPYF_RANGE) != 0);
	return 0;
}

static int json_memset(const struct dump_ctx *c, FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_memset m;
	char fl[64];

	if (ktrace_decode_memset(rec, len, &m))
		return -1;
	json_put_u64(f, "op_seq", m.op_seq);
	json_put_hex(f, "dst", m.dst);
	json_put_u64(f, "count", m.count);
	json_put_u64(f, "elem_size", m.elem_size);
	json_put_hex(f, "value", m.value);
	json_put_hex(f, "stream", m.stream);
	json_put_hex(f, "context", m.context);
	json_put_name_list(f, "copy_flags", dump_copy_flag_names(m.flags, fl, sizeof fl, ","));
	json_put_u64(f, "tid", m.tid);
	json_put_i64(f, "result", m.result);
	dump_json_graph_ref(f, &m.graph, (m.flags & KTRACE_COPYF_GRAPH) != 0);
	dump_json_range_ref(f, c, &m.range, (m.flags & KTRACE_COPYF_RANGE) != 0);
	return 0;
}

static int json_note(FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_note n;
	if (ktrace_decode_note(rec, len, &n))
		return -1;
	json_put_cstr(f, "level", dump_note_level_name(n.level));
	json_put_u64(f, "code", n.code);
	json_put_str(f, "text", n.text);
	return 0;
}

static int json_counters(FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_counters r;
	if (ktrace_decode_counters(rec, len, &r))
		return -1;
	fputs(",\"counters\":{", f);
	for (uint32_t i = 0; i < r.ncounters; i++) {
		struct ktrace_counter c;
		ktrace_counters_get(&r, i, &c);
		const char *nm = ktrace_counter_name(c.id);
		if (strcmp(nm, "unknown"))
			fprintf(f, "%s\"%s\":%llu", i ? "," : "", nm, as_ull(c.value));
		else
			fprintf(f, "%s\"counter%u\":%llu", i ? "," : "", c.id, as_ull(c.value));
	}
	fputc('}', f);
	return 0;
}

static int json_end(FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_end e;
	if (ktrace_decode_end(rec, len, &e))
		return -1;
	json_put_cstr(f, "reason", dump_end_reason_name(e.reason));
	json_put_i64(f, "status", e.status);
	json_put_u64(f, "records_written", e.records_written);
	json_put_u64(f, "ops", e.launches);
	return 0;
}

static int json_module_unload(FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_module_unload m;
	if (ktrace_decode_module_unload(rec, len, &m))
		return -1;
	json_put_u64(f, "module_id", m.module_id);
	return 0;
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
	dump_put_json_string(f, b->name, strlen(b->name));
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
		fprintf(f, "%s%llu", k ? "," : "", as_ull(d->first[k]));
	fputs("]}", f);
}

static int json_replay(FILE *f, const void *rec, size_t len, const struct dump_kernel *k)
{
	struct ktrace_rec_replay r;
	struct ktrace_replay_report rep;
	char *para;
	size_t n;

	if (ktrace_decode_replay(rec, len, &r) || ktrace_replay_report_parse(r.blob, r.blob_len, &rep))
		return -1;
	json_put_u64(f, "op_seq", r.launch_seq);
	json_put_u64(f, "kernel_id", r.kernel_id);
	/* the record names the kernel by its symbol; the name the reports print comes from its KERNEL record */
	if (k && k->k.demangled.len)
		json_put_str(f, "kernel", k->k.demangled);
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
		dump_put_json_string(f, para, n);
	}
	free(para);
	ktrace_replay_report_free(&rep);
	return 0;
}

static int json_order(FILE *f, const void *rec, size_t len)
{
	struct ktrace_rec_order o;
	char fl[200];
	if (ktrace_decode_order(rec, len, &o))
		return -1;
	json_put_cstr(f, "op", ktrace_order_op_name(o.op));
	json_put_u64(f, "op_id", o.op);
	json_put_u64(f, "op_seq_before", o.launch_seq_before);
	json_put_hex(f, "stream", o.stream);
	json_put_hex(f, "event", o.event);
	json_put_hex(f, "context", o.context);
	json_put_i64(f, "device", o.device);
	json_put_u64(f, "tid", o.tid);
	json_put_name_list(f, "stream_flags", dump_stream_flag_names(o.stream_flags, fl, sizeof fl, ","));
	json_put_i64(f, "priority", o.priority);
	return 0;
}

/* The record's own fields; -1 when it does not decode. */
static int json_fields(const struct dump_ctx *c, FILE *f, const struct ktrace_record_prefix *p, const void *rec,
		       size_t len, const struct dump_kernel *k)
{
	switch (p->type) {
	case KTRACE_REC_HEADER: return json_header(c, f, rec, len);
	case KTRACE_REC_MODULE: return json_module(f, rec, len);
	case KTRACE_REC_MODULE_IMAGE: return json_module_image(f, rec, len);
	case KTRACE_REC_KERNEL: return json_kernel(f, rec, len);
	case KTRACE_REC_LAUNCH: return json_launch(c, f, rec, len, k);
	case KTRACE_REC_ALLOC: return json_alloc(f, rec, len);
	case KTRACE_REC_FREE: return json_free(f, rec, len);
	case KTRACE_REC_MEMCPY: return json_memcpy(c, f, rec, len);
	case KTRACE_REC_MEMSET: return json_memset(c, f, rec, len);
	case KTRACE_REC_NOTE: return json_note(f, rec, len);
	case KTRACE_REC_COUNTERS: return json_counters(f, rec, len);
	case KTRACE_REC_END: return json_end(f, rec, len);
	case KTRACE_REC_MODULE_UNLOAD: return json_module_unload(f, rec, len);
	case KTRACE_REC_ORDER: return json_order(f, rec, len);
	case KTRACE_REC_REPLAY: return json_replay(f, rec, len, k);
	case KTRACE_REC_GRAPH: return dump_json_graph(f, rec, len);
	case KTRACE_REC_RANGE: return dump_json_range(f, rec, len);
	case KTRACE_REC_PYSTACK: return dump_json_pystack(f, rec, len);
	case KTRACE_REC_GPUTIME: return dump_json_gputime(f, rec, len);
	default:
		json_put_u64(f, "type_id", p->type);
		return 0;
	}
}

int dump_json_record(struct dump_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len,
		     const struct dump_kernel *k)
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
	dump_put_json_string(f, tn, strlen(tn));
	json_put_u64(f, "seq", p->seq);
	json_put_u64(f, "time_ns", p->time_ns);
	json_put_u64(f, "size", len);
	if (p->flags) {
		char fl[200];
		json_put_name_list(f, "record_flags", dump_record_flag_names(p->flags, fl, sizeof fl, ","));
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
