/* tools/dump_text.c: ktrace-dump's readable text form: one block per launch
 * (then one line per argument and per pointer region), one line for every
 * other record.
 */
#include "tools/dump_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define X(v) ((unsigned long long)(v))

static void put_str(FILE *f, struct ktrace_str s)
{
	dump_put_escaped(f, s.ptr, s.len);
}

static void put_time(struct dump_ctx *c, uint64_t t)
{
	if (c->have_header && t >= c->start_mono_ns) {
		uint64_t d = t - c->start_mono_ns;
		fprintf(c->out, "t=+%llu.%09llu", X(d / 1000000000ull), X(d % 1000000000ull));
	} else {
		fprintf(c->out, "t=%llu", X(t));
	}
}

static int text_header(struct dump_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	struct ktrace_rec_header h;
	if (ktrace_decode_header(rec, len, &h))
		return -1;
	FILE *f = c->out;
	fprintf(f, "header seq %llu: pid %u ppid %u rank %u host ", X(p->seq), h.pid, h.ppid, h.rank);
	put_str(f, h.host);
	fputs(" ktrace ", f);
	put_str(f, h.ktrace_version);
	fprintf(f, " digest %s\n", h.digest_alg == 1 ? "kt64v1" : h.digest_alg ? "unknown" : "none");
	fputs("  cmdline: ", f);
	put_str(f, h.cmdline);
	fputs("\n  config: ", f);
	put_str(f, h.config);
	time_t secs = (time_t)(h.start_realtime_ns / 1000000000ull);
	struct tm tm;
	char when[64] = "?";
	if (gmtime_r(&secs, &tm))
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "\n  start: %s.%09lluZ (monotonic %llu ns)\n", when, X(h.start_realtime_ns % 1000000000ull),
		X(h.start_monotonic_ns));
	return 0;
}

static void put_kernel_name(FILE *f, const struct dump_kernel *k, uint64_t id)
{
	if (!k)
		fprintf(f, "<unknown kernel %llu>", X(id));
	else if (k->k.demangled.len)
		put_str(f, k->k.demangled);
	else if (k->k.name.len)
		put_str(f, k->k.name);
	else
		fprintf(f, "<unnamed kernel %llu>", X(id));
}

static void put_region(FILE *f, const struct ktrace_region *g)
{
	char fl[96];
	fprintf(f, "    @%u ptr 0x%llx ", g->param_offset, X(g->ptr));
	if (g->alloc_base)
		fprintf(f, "alloc 0x%llx+0x%llx size %llu", X(g->alloc_base), X(g->ptr - g->alloc_base),
			X(g->alloc_size));
	else
		fputs("alloc ?", f);
	if (g->flags & KTRACE_REGIONF_UNHASHED || !g->hash_len) {
		fputs(" not hashed", f);
	} else {
		fprintf(f, " len %llu", X(g->hash_len));
		if (g->flags & KTRACE_REGIONF_PRE)
			fprintf(f, " pre %016llx", X(g->pre_hash));
		else
			fputs(" pre -", f);
		if (g->flags & KTRACE_REGIONF_POST)
			fprintf(f, " post %016llx", X(g->post_hash));
		else
			fputs(" post -", f);
	}
	uint16_t extra = g->flags & (uint16_t)~(KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST | KTRACE_REGIONF_UNHASHED);
	if (extra)
		fprintf(f, " (%s)", dump_region_flag_names(extra, fl, sizeof fl, ","));
	if (dump_region_out(g))
		fputs(" [OUT]", f);
	fputc('\n', f);
}

static int text_launch(struct dump_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len,
		       const struct dump_kernel *k)
{
	struct ktrace_rec_launch l;
	if (ktrace_decode_launch(rec, len, &l))
		return -1;
	FILE *f = c->out;
	char fl[160];
	fprintf(f, "launch %llu seq %llu ", X(l.launch_seq), X(p->seq));
	put_time(c, p->time_ns);
	fprintf(f, " kernel %llu ", X(l.kernel_id));
	put_kernel_name(f, k, l.kernel_id);
	fprintf(f, "\n  grid %ux%ux%u block %ux%ux%u", l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
		l.block[2]);
	if (l.cluster[0] || l.cluster[1] || l.cluster[2])
		fprintf(f, " cluster %ux%ux%u", l.cluster[0], l.cluster[1], l.cluster[2]);
	fprintf(f, " smem %u stream 0x%llx ctx 0x%llx dev %d tid %u api %s", l.shared_mem, X(l.stream),
		X(l.context), l.device, l.tid, dump_api_name(l.api));
	if (l.result)
		fprintf(f, " result %d", l.result);
	if (l.flags)
		fprintf(f, " flags %s", dump_launch_flag_names(l.flags, fl, sizeof fl, ","));
	fputc('\n', f);

	uint32_t nparams = k ? k->k.nparams : 0;
	unsigned char *used = NULL;
	if (l.nregions)
		used = calloc(l.nregions, 1);
	for (uint32_t i = 0; i < nparams; i++) {
		struct ktrace_param_desc d;
		char val[512];
		if (ktrace_kernel_param(&k->k, i, &d))
			continue;
		fprintf(f, "  arg %u ", d.ordinal);
		if (d.name.len)
			put_str(f, d.name);
		else
			fprintf(f, "arg%u", d.ordinal);
		if (d.type.len) {
			fputs(" (", f);
			put_str(f, d.type);
			fputc(')', f);
		}
		fprintf(f, " = %s", dump_param_value(&d, l.param_bytes, l.param_bytes_len, 0, val, sizeof val));
		if (d.flags & KTRACE_PARAMF_SCRATCH)
			fputs(" [scratch]", f);
		fputc('\n', f);
		for (uint32_t r = 0; r < l.nregions; r++) {
			struct ktrace_region g;
			ktrace_launch_region(&l, r, &g);
			if (g.ordinal != d.ordinal || (used && used[r]))
				continue;
			if (used)
				used[r] = 1;
			put_region(f, &g);
		}
	}
	if (!nparams && l.param_bytes_len) {
		fprintf(f, "  params (%u bytes, layout unknown): ", l.param_bytes_len);
		dump_put_hex(f, l.param_bytes, l.param_bytes_len);
		fputc('\n', f);
	}
	int header = 0;
	for (uint32_t r = 0; r < l.nregions; r++) {
		if (used && used[r])
			continue;
		if (!header++)
			fputs("  regions without a known parameter:\n", f);
		struct ktrace_region g;
		ktrace_launch_region(&l, r, &g);
		put_region(f, &g);
	}
	free(used);
	return 0;
}

static int text_other(struct dump_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len);

int dump_text_record(struct dump_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len,
		     const struct dump_kernel *k)
{
	int rc;
	if (p->type == KTRACE_REC_HEADER)
		rc = text_header(c, p, rec, len);
	else if (p->type == KTRACE_REC_LAUNCH)
		rc = text_launch(c, p, rec, len, k);
	else
		rc = text_other(c, p, rec, len);
	if (rc)
		fprintf(c->out, "%s seq %llu: malformed record (%zu bytes)\n", ktrace_record_type_name(p->type),
			X(p->seq), len);
	return rc;
}

static int text_other(struct dump_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	FILE *f = c->out;
	unsigned long long seq = X(p->seq);
	switch (p->type) {
	case KTRACE_REC_MODULE: {
		struct ktrace_rec_module m;
		if (ktrace_decode_module(rec, len, &m))
			return -1;
		fprintf(f, "module %llu seq %llu: %s from %s handle 0x%llx size %llu digest %016llx", X(m.module_id),
			seq, dump_module_kind_name(m.kind), dump_module_source_name(m.source), X(m.handle),
			X(m.image_size), X(m.image_digest));
		if (m.path.len) {
			fputs(" path ", f);
			put_str(f, m.path);
		}
		fputc('\n', f);
		return 0;
	}
	case KTRACE_REC_MODULE_IMAGE: {
		struct ktrace_rec_module_image m;
		if (ktrace_decode_module_image(rec, len, &m))
			return -1;
		fprintf(f, "module_image seq %llu: digest %016llx bytes %llu..%llu of %llu\n", seq, X(m.image_digest),
			X(m.chunk_offset), X(m.chunk_offset + m.chunk_len), X(m.image_size));
		return 0;
	}
	case KTRACE_REC_KERNEL: {
		struct ktrace_rec_kernel k;
		if (ktrace_decode_kernel(rec, len, &k))
			return -1;
		fprintf(f, "kernel %llu seq %llu: ", X(k.kernel_id), seq);
		put_str(f, k.name);
		if (k.demangled.len) {
			fputs(" (", f);
			put_str(f, k.demangled);
			fputc(')', f);
		}
		fprintf(f, " module %llu handle 0x%llx params %u (%u bytes, layout %s)\n", X(k.module_id),
			X(k.handle), k.nparams, k.param_bytes, dump_layout_source_name(k.layout_source));
		return 0;
	}
	case KTRACE_REC_ALLOC: {
		struct ktrace_rec_alloc a;
		if (ktrace_decode_alloc(rec, len, &a))
			return -1;
		fprintf(f, "alloc seq %llu: %s 0x%llx size %llu dev %d", seq, dump_alloc_kind_name(a.kind), X(a.base),
			X(a.size), a.device);
		if (a.stream)
			fprintf(f, " stream 0x%llx", X(a.stream));
		fputc('\n', f);
		return 0;
	}
	case KTRACE_REC_FREE: {
		struct ktrace_rec_free a;
		if (ktrace_decode_free(rec, len, &a))
			return -1;
		fprintf(f, "free seq %llu: %s 0x%llx size %llu", seq, dump_alloc_kind_name(a.kind), X(a.base),
			X(a.size));
		if (a.stream)
			fprintf(f, " stream 0x%llx", X(a.stream));
		fputc('\n', f);
		return 0;
	}
	case KTRACE_REC_MEMCPY: {
		struct ktrace_rec_memcpy m;
		if (ktrace_decode_memcpy(rec, len, &m))
			return -1;
		fprintf(f, "memcpy op %llu seq %llu: %s %llu bytes dst 0x%llx src 0x%llx stream 0x%llx ctx 0x%llx tid %u",
			X(m.op_seq), seq, dump_copy_dir_name(m.dir), X(m.bytes), X(m.dst), X(m.src), X(m.stream),
			X(m.context), m.tid);
		if (m.flags & KTRACE_COPYF_ASYNC)
			fputs(" async", f);
		if (m.flags & KTRACE_COPYF_2D)
			fputs(" 2d", f);
		if (m.flags & KTRACE_COPYF_3D)
			fputs(" 3d", f);
		if (m.flags & KTRACE_COPYF_SRC_DIGEST)
			fprintf(f, " src_digest %016llx", X(m.src_digest));
		if (m.result)
			fprintf(f, " result %d", m.result);
		fputc('\n', f);
		return 0;
	}
	case KTRACE_REC_MEMSET: {
		struct ktrace_rec_memset m;
		if (ktrace_decode_memset(rec, len, &m))
			return -1;
		fprintf(f, "memset op %llu seq %llu: dst 0x%llx count %llu x %u bytes value 0x%llx stream 0x%llx ctx 0x%llx tid %u",
			X(m.op_seq), seq, X(m.dst), X(m.count), m.elem_size, X(m.value), X(m.stream), X(m.context),
			m.tid);
		if (m.flags & KTRACE_COPYF_ASYNC)
			fputs(" async", f);
		if (m.flags & KTRACE_COPYF_2D)
			fputs(" 2d", f);
		if (m.result)
			fprintf(f, " result %d", m.result);
		fputc('\n', f);
		return 0;
	}
	case KTRACE_REC_NOTE: {
		struct ktrace_rec_note n;
		if (ktrace_decode_note(rec, len, &n))
			return -1;
		fprintf(f, "note seq %llu: %s code %u: ", seq, dump_note_level_name(n.level), n.code);
		put_str(f, n.text);
		fputc('\n', f);
		return 0;
	}
	case KTRACE_REC_COUNTERS: {
		struct ktrace_rec_counters r;
		if (ktrace_decode_counters(rec, len, &r))
			return -1;
		fprintf(f, "counters seq %llu:", seq);
		for (uint32_t i = 0; i < r.ncounters; i++) {
			struct ktrace_counter k;
			ktrace_counters_get(&r, i, &k);
			const char *nm = ktrace_counter_name(k.id);
			if (strcmp(nm, "unknown"))
				fprintf(f, " %s=%llu", nm, X(k.value));
			else
				fprintf(f, " counter%u=%llu", k.id, X(k.value));
		}
		fputc('\n', f);
		return 0;
	}
	case KTRACE_REC_END: {
		struct ktrace_rec_end e;
		if (ktrace_decode_end(rec, len, &e))
			return -1;
		fprintf(f, "end seq %llu: %s status %d, %llu records before, %llu launches\n", seq,
			dump_end_reason_name(e.reason), e.status, X(e.records_written), X(e.launches));
		return 0;
	}
	case KTRACE_REC_MODULE_UNLOAD: {
		struct ktrace_rec_module_unload m;
		if (ktrace_decode_module_unload(rec, len, &m))
			return -1;
		fprintf(f, "module_unload seq %llu: module %llu\n", seq, X(m.module_id));
		return 0;
	}
	default:
		fprintf(f, "record seq %llu: unknown type %u, %zu bytes (skipped)\n", seq, p->type, len);
		return 0;
	}
}
