/* tools/dump_json.c: ktrace-dump --json: JSON Lines, one object per record with
 * every field.  Pointers, handles and digests are hex strings ("0x..." and
 * 16-digit digests) so 64-bit values survive JavaScript and pandas; counts
 * and sizes are numbers.
 */
#include "tools/dump_internal.h"

#include <stdlib.h>
#include <string.h>

#define X(v) ((unsigned long long)(v))

static void ju(FILE *f, const char *k, uint64_t v)
{
	fprintf(f, ",\"%s\":%llu", k, X(v));
}

static void ji(FILE *f, const char *k, int64_t v)
{
	fprintf(f, ",\"%s\":%lld", k, (long long)v);
}

static void jx(FILE *f, const char *k, uint64_t v)
{
	fprintf(f, ",\"%s\":\"0x%llx\"", k, X(v));
}

static void jd(FILE *f, const char *k, uint64_t v)
{
	fprintf(f, ",\"%s\":\"%016llx\"", k, X(v));
}

static void js(FILE *f, const char *k, struct ktrace_str s)
{
	fprintf(f, ",\"%s\":", k);
	dump_put_json_string(f, s.ptr, s.len);
}

static void jc(FILE *f, const char *k, const char *s)
{
	fprintf(f, ",\"%s\":", k);
	dump_put_json_string(f, s, strlen(s));
}

static void jflags(FILE *f, const char *k, const char *names)
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

static void json_region(FILE *f, const struct ktrace_region *g)
{
	char fl[96];
	fprintf(f, "{\"param_offset\":%u,\"ordinal\":%u", g->param_offset, g->ordinal);
	jflags(f, "flags", dump_region_flag_names(g->flags, fl, sizeof fl, ","));
	jx(f, "ptr", g->ptr);
	jx(f, "alloc_base", g->alloc_base);
	ju(f, "alloc_size", g->alloc_size);
	ju(f, "hash_len", g->hash_len);
	if (g->flags & KTRACE_REGIONF_PRE)
		jd(f, "pre_hash", g->pre_hash);
	else
		fputs(",\"pre_hash\":null", f);
	if (g->flags & KTRACE_REGIONF_POST)
		jd(f, "post_hash", g->post_hash);
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
	js(f, "name", d->name);
	js(f, "type", d->type);
	jc(f, "kind", ktrace_param_kind_name(d->kind));
	jc(f, "name_source", ktrace_name_source_name(d->name_source));
	ju(f, "offset", d->offset);
	ju(f, "size", d->size);
	jflags(f, "flags", fl);
}

static int json_launch(FILE *f, const void *rec, size_t len, const struct dump_kernel *k)
{
	struct ktrace_rec_launch l;
	char fl[160];
	if (ktrace_decode_launch(rec, len, &l))
		return -1;
	ju(f, "launch_seq", l.launch_seq);
	ju(f, "kernel_id", l.kernel_id);
	if (k) {
		js(f, "kernel", k->k.name);
		js(f, "kernel_demangled", k->k.demangled);
	} else {
		fputs(",\"kernel\":null,\"kernel_demangled\":null", f);
	}
	jx(f, "context", l.context);
	jx(f, "stream", l.stream);
	ju(f, "tid", l.tid);
	ji(f, "device", l.device);
	jc(f, "api", dump_api_name(l.api));
	jflags(f, "launch_flags", dump_launch_flag_names(l.flags, fl, sizeof fl, ","));
	fprintf(f, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"cluster\":[%u,%u,%u]", l.grid[0], l.grid[1],
		l.grid[2], l.block[0], l.block[1], l.block[2], l.cluster[0], l.cluster[1], l.cluster[2]);
	ju(f, "shared_mem", l.shared_mem);
	ji(f, "result", l.result);
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
		json_region(f, &g);
	}
	fputc(']', f);
	return 0;
}

static int json_fields(FILE *f, const struct ktrace_record_prefix *p, const void *rec, size_t len,
		       const struct dump_kernel *k)
{
	switch (p->type) {
	case KTRACE_REC_HEADER: {
		struct ktrace_rec_header h;
		if (ktrace_decode_header(rec, len, &h))
			return -1;
		ju(f, "pid", h.pid);
		ju(f, "ppid", h.ppid);
		ju(f, "rank", h.rank);
		ju(f, "digest_alg", h.digest_alg);
		ju(f, "start_realtime_ns", h.start_realtime_ns);
		ju(f, "start_monotonic_ns", h.start_monotonic_ns);
		js(f, "host", h.host);
		js(f, "cmdline", h.cmdline);
		js(f, "ktrace_version", h.ktrace_version);
		js(f, "config", h.config);
		return 0;
	}
	case KTRACE_REC_MODULE: {
		struct ktrace_rec_module m;
		if (ktrace_decode_module(rec, len, &m))
			return -1;
		ju(f, "module_id", m.module_id);
		jx(f, "handle", m.handle);
		jd(f, "image_digest", m.image_digest);
		ju(f, "image_size", m.image_size);
		jc(f, "kind", dump_module_kind_name(m.kind));
		jc(f, "source", dump_module_source_name(m.source));
		js(f, "path", m.path);
		return 0;
	}
	case KTRACE_REC_MODULE_IMAGE: {
		struct ktrace_rec_module_image m;
		if (ktrace_decode_module_image(rec, len, &m))
			return -1;
		jd(f, "image_digest", m.image_digest);
		ju(f, "image_size", m.image_size);
		ju(f, "chunk_offset", m.chunk_offset);
		ju(f, "chunk_len", m.chunk_len);
		fputs(",\"data_hex\":\"", f);
		dump_put_hex(f, m.bytes, m.chunk_len);
		fputc('"', f);
		return 0;
	}
	case KTRACE_REC_KERNEL: {
		struct ktrace_rec_kernel kr;
		if (ktrace_decode_kernel(rec, len, &kr))
			return -1;
		ju(f, "kernel_id", kr.kernel_id);
		ju(f, "module_id", kr.module_id);
		jx(f, "handle", kr.handle);
		jc(f, "layout_source", dump_layout_source_name(kr.layout_source));
		ju(f, "param_bytes", kr.param_bytes);
		js(f, "name", kr.name);
		js(f, "demangled", kr.demangled);
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
	case KTRACE_REC_LAUNCH:
		return json_launch(f, rec, len, k);
	case KTRACE_REC_ALLOC: {
		struct ktrace_rec_alloc a;
		if (ktrace_decode_alloc(rec, len, &a))
			return -1;
		jx(f, "base", a.base);
		ju(f, "bytes", a.size);
		jx(f, "stream", a.stream);
		ji(f, "device", a.device);
		jc(f, "kind", dump_alloc_kind_name(a.kind));
		return 0;
	}
	case KTRACE_REC_FREE: {
		struct ktrace_rec_free a;
		if (ktrace_decode_free(rec, len, &a))
			return -1;
		jx(f, "base", a.base);
		ju(f, "bytes", a.size);
		jx(f, "stream", a.stream);
		jc(f, "kind", dump_alloc_kind_name(a.kind));
		return 0;
	}
	case KTRACE_REC_MEMCPY: {
		struct ktrace_rec_memcpy m;
		if (ktrace_decode_memcpy(rec, len, &m))
			return -1;
		ju(f, "op_seq", m.op_seq);
		jc(f, "dir", dump_copy_dir_name(m.dir));
		jx(f, "dst", m.dst);
		jx(f, "src", m.src);
		ju(f, "bytes", m.bytes);
		jx(f, "stream", m.stream);
		jx(f, "context", m.context);
		if (m.flags & KTRACE_COPYF_SRC_DIGEST)
			jd(f, "src_digest", m.src_digest);
		else
			fputs(",\"src_digest\":null", f);
		ju(f, "copy_flags", m.flags);
		ju(f, "tid", m.tid);
		ji(f, "result", m.result);
		return 0;
	}
	case KTRACE_REC_MEMSET: {
		struct ktrace_rec_memset m;
		if (ktrace_decode_memset(rec, len, &m))
			return -1;
		ju(f, "op_seq", m.op_seq);
		jx(f, "dst", m.dst);
		ju(f, "count", m.count);
		ju(f, "elem_size", m.elem_size);
		jx(f, "value", m.value);
		jx(f, "stream", m.stream);
		jx(f, "context", m.context);
		ju(f, "copy_flags", m.flags);
		ju(f, "tid", m.tid);
		ji(f, "result", m.result);
		return 0;
	}
	case KTRACE_REC_NOTE: {
		struct ktrace_rec_note n;
		if (ktrace_decode_note(rec, len, &n))
			return -1;
		jc(f, "level", dump_note_level_name(n.level));
		ju(f, "code", n.code);
		js(f, "text", n.text);
		return 0;
	}
	case KTRACE_REC_COUNTERS: {
		struct ktrace_rec_counters r;
		if (ktrace_decode_counters(rec, len, &r))
			return -1;
		fputs(",\"counters\":{", f);
		for (uint32_t i = 0; i < r.ncounters; i++) {
			struct ktrace_counter c;
			ktrace_counters_get(&r, i, &c);
			const char *nm = ktrace_counter_name(c.id);
			if (strcmp(nm, "unknown"))
				fprintf(f, "%s\"%s\":%llu", i ? "," : "", nm, X(c.value));
			else
				fprintf(f, "%s\"counter%u\":%llu", i ? "," : "", c.id, X(c.value));
		}
		fputc('}', f);
		return 0;
	}
	case KTRACE_REC_END: {
		struct ktrace_rec_end e;
		if (ktrace_decode_end(rec, len, &e))
			return -1;
		jc(f, "reason", dump_end_reason_name(e.reason));
		ji(f, "status", e.status);
		ju(f, "records_written", e.records_written);
		ju(f, "launches", e.launches);
		return 0;
	}
	case KTRACE_REC_MODULE_UNLOAD: {
		struct ktrace_rec_module_unload m;
		if (ktrace_decode_module_unload(rec, len, &m))
			return -1;
		ju(f, "module_id", m.module_id);
		return 0;
	}
	default:
		ju(f, "type_id", p->type);
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
		rc = json_fields(m, p, rec, len, k);
		if (fclose(m))
			rc = -1;
	}
	const char *tn = ktrace_record_type_name(p->type);
	fputs("{\"type\":", f);
	dump_put_json_string(f, tn, strlen(tn));
	ju(f, "seq", p->seq);
	ju(f, "time_ns", p->time_ns);
	ju(f, "size", len);
	if (p->flags)
		ju(f, "record_flags", p->flags);
	if (c->file)
		jc(f, "file", c->file);
	if (rc == 0 && body)
		fwrite(body, 1, blen, f);
	else
		fputs(",\"malformed\":true", f);
	fputs("}\n", f);
	free(body);
	return rc;
}
