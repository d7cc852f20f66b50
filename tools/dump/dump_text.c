/* tools/dump/dump_text.c: ktrace-dump's readable text form: one block per launch
 * (then one line per argument and per pointer region), one line for every
 * other record.
 */
#include "tools/dump/dump_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/record_table.h"
#include "format/replay_report.h"
#include "tools/model/unverified.h"

static void put_str(FILE *f, struct ktrace_str s)
{
	ktrace_put_escaped(f, s.ptr, s.len);
}

static void put_time(const struct record_ctx *c, uint64_t t)
{
	if (c->have_header && t >= c->start_mono_ns) {
		uint64_t d = t - c->start_mono_ns;
		ktrace_putf(c->out, "t=+%llu.%09llu", ktrace_ull(d / 1000000000ull), ktrace_ull(d % 1000000000ull));
	} else {
		ktrace_putf(c->out, "t=%llu", ktrace_ull(t));
	}
}

static int text_header(const struct record_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	struct ktrace_rec_header h;
	if (ktrace_decode_header(rec, len, &h))
		return -1;
	FILE *f = c->out;
	ktrace_putf(f, "header seq %llu: pid %u ppid %u rank %u host ", ktrace_ull(p->seq), h.pid, h.ppid, h.rank);
	put_str(f, h.host);
	fputs_unlocked(" ktrace ", f);
	put_str(f, h.ktrace_version);
	ktrace_putf(f, " format %u.%u digest %s\n", c->format_major, c->format_minor,
		h.digest_alg == 1 ? "kt64v1" : h.digest_alg ? "unknown" : "none");
	fputs_unlocked("  cmdline: ", f);
	put_str(f, h.cmdline);
	fputs_unlocked("\n  config: ", f);
	put_str(f, h.config);
	time_t secs = (time_t)(h.start_realtime_ns / 1000000000ull);
	struct tm tm;
	char when[64] = "?";
	if (gmtime_r(&secs, &tm))
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	ktrace_putf(f, "\n  start: %s.%09lluZ (monotonic %llu ns)\n", when, ktrace_ull(h.start_realtime_ns % 1000000000ull),
		ktrace_ull(h.start_monotonic_ns));
	return 0;
}

static void put_kernel_name(FILE *f, const struct ktrace_rec_kernel *k, uint64_t id)
{
	if (!k)
		ktrace_putf(f, "<unknown kernel %llu>", ktrace_ull(id));
	else if (k->demangled.len)
		put_str(f, k->demangled);
	else if (k->name.len)
		put_str(f, k->name);
	else
		ktrace_putf(f, "<unnamed kernel %llu>", ktrace_ull(id));
}

static void put_region(const struct record_ctx *c, FILE *f, const struct ktrace_region *g)
{
	const char *extent = ktrace_region_extent_name(c->exactness_known, g);
	char fl[96];
	if (g->flags & KTRACE_REGIONF_COLL_BUFFER) /* param_offset names the COLL record and the buffer */
		ktrace_putf(f, "    coll %u %s ptr 0x%llx ", g->param_offset >> 1, g->param_offset & 1 ? "recv" : "send",
			ktrace_ull(g->ptr));
	else
		ktrace_putf(f, "    @%u ptr 0x%llx ", g->param_offset, ktrace_ull(g->ptr));
	if (g->alloc_base)
		ktrace_putf(f, "alloc 0x%llx+0x%llx size %llu", ktrace_ull(g->alloc_base), ktrace_ull(g->ptr - g->alloc_base),
			ktrace_ull(g->alloc_size));
	else
		fputs_unlocked("alloc ?", f);
	if (g->flags & KTRACE_REGIONF_UNHASHED || !g->hash_len) {
		fputs_unlocked(" not hashed", f);
	} else {
		ktrace_putf(f, " len %llu", ktrace_ull(g->hash_len));
		if (extent)
			ktrace_putf(f, " %s", extent);
		if (g->flags & KTRACE_REGIONF_PRE)
			ktrace_putf(f, " pre %016llx", ktrace_ull(g->pre_hash));
		else
			fputs_unlocked(" pre -", f);
		if (g->flags & KTRACE_REGIONF_PRE_CARRIED)
			ktrace_putf(f, " (carried from op %llu)", ktrace_ull(g->pre_from));
		if (g->flags & KTRACE_REGIONF_POST)
			ktrace_putf(f, " post %016llx", ktrace_ull(g->post_hash));
		else
			fputs_unlocked(" post -", f);
	}
	uint16_t extra = g->flags & (uint16_t)~(KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST | KTRACE_REGIONF_UNHASHED |
						 KTRACE_REGIONF_EXACT | KTRACE_REGIONF_SIGNATURE |
						 KTRACE_REGIONF_PRE_CARRIED);
	if (extra)
		ktrace_putf(f, " (%s)", ktrace_flag_names(extra, ktrace_region_flag_name, fl, sizeof fl, ","));
	if (ktrace_region_out(g))
		fputs_unlocked(" [OUT]", f);
	putc_unlocked('\n', f);
}

static int text_launch(const struct record_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len,
		       const struct ktrace_rec_kernel *k)
{
	struct ktrace_rec_launch l;
	if (ktrace_decode_launch(rec, len, &l))
		return -1;
	FILE *f = c->out;
	char fl[160];
	ktrace_putf(f, "launch op %llu seq %llu ", ktrace_ull(l.launch_seq), ktrace_ull(p->seq));
	put_time(c, p->time_ns);
	ktrace_putf(f, " kernel %llu ", ktrace_ull(l.kernel_id));
	put_kernel_name(f, k, l.kernel_id);
	ktrace_putf(f, "\n  grid %ux%ux%u block %ux%ux%u", l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
		l.block[2]);
	if (l.cluster[0] || l.cluster[1] || l.cluster[2])
		ktrace_putf(f, " cluster %ux%ux%u", l.cluster[0], l.cluster[1], l.cluster[2]);
	ktrace_putf(f, " smem %u stream 0x%llx ctx 0x%llx dev %d tid %u api %s", l.shared_mem, ktrace_ull(l.stream),
		ktrace_ull(l.context), l.device, l.tid, ktrace_launch_api_name(l.api));
	if (l.result)
		ktrace_putf(f, " result %d", l.result);
	if (l.flags)
		ktrace_putf(f, " flags %s", ktrace_flag_names(l.flags, ktrace_launch_flag_name, fl, sizeof fl, ","));
	putc_unlocked('\n', f);
	if (l.flags & KTRACE_LAUNCHF_GRAPH)
		ktrace_dump_text_graph_ref(f, &l.graph);
	if (l.flags & KTRACE_LAUNCHF_RANGE)
		ktrace_dump_text_range_ref(f, c, &l.range);
	uint32_t unv = ktrace_unv_record_mask(&l);
	if (unv) {
		char why[512];
		ktrace_putf(f, "  unverifiable: %s\n", ktrace_unv_record_text(&l, unv, why, sizeof why));
	}

	uint32_t nparams = k ? k->nparams : 0;
	unsigned char *used = NULL;
	if (l.nregions)
		used = calloc(l.nregions, 1);
	for (uint32_t i = 0; i < nparams; i++) {
		struct ktrace_param_desc d;
		char val[512];
		if (ktrace_kernel_param(k, i, &d))
			continue;
		ktrace_putf(f, "  arg %u ", d.ordinal);
		if (d.name.len)
			put_str(f, d.name);
		else
			ktrace_putf(f, "arg%u", d.ordinal);
		if (d.type.len) {
			fputs_unlocked(" (", f);
			put_str(f, d.type);
			putc_unlocked(')', f);
		}
		ktrace_putf(f, " = %s", ktrace_param_value(&d, l.param_bytes, l.param_bytes_len, 0, val, sizeof val));
		if (d.flags & KTRACE_PARAMF_SCRATCH)
			fputs_unlocked(" [scratch]", f);
		putc_unlocked('\n', f);
		for (uint32_t r = 0; r < l.nregions; r++) {
			struct ktrace_region g;
			ktrace_launch_region(&l, r, &g);
			if (g.ordinal != d.ordinal || (used && used[r]))
				continue;
			if (used)
				used[r] = 1;
			put_region(c, f, &g);
		}
	}
	if (!nparams && l.param_bytes_len) {
		ktrace_putf(f, "  params (%u bytes, layout unknown): ", l.param_bytes_len);
		ktrace_put_hex(f, l.param_bytes, l.param_bytes_len);
		putc_unlocked('\n', f);
	}
	int header = 0;
	for (uint32_t r = 0; r < l.nregions; r++) {
		if (used && used[r])
			continue;
		if (!header++)
			fputs_unlocked("  regions without a known parameter:\n", f);
		struct ktrace_region g;
		ktrace_launch_region(&l, r, &g);
		put_region(c, f, &g);
	}
	free(used);
	return 0;
}

/* ---- one line for each other record type ---- */

static int text_module(FILE *f, unsigned long long seq, const struct ktrace_rec_module *m)
{
	fprintf(f, "module %llu seq %llu: %s from %s handle 0x%llx size %llu digest %016llx", ktrace_ull(m->module_id),
		seq, ktrace_module_kind_name(m->kind), ktrace_module_source_name(m->source), ktrace_ull(m->handle),
		ktrace_ull(m->image_size), ktrace_ull(m->image_digest));
	if (m->path.len) {
		fputs(" path ", f);
		put_str(f, m->path);
	}
	fputc('\n', f);
	return 0;
}

static int text_module_image(FILE *f, unsigned long long seq, const struct ktrace_rec_module_image *m)
{
	fprintf(f, "module_image seq %llu: digest %016llx bytes %llu..%llu of %llu\n", seq, ktrace_ull(m->image_digest),
		ktrace_ull(m->chunk_offset), ktrace_ull(m->chunk_offset + m->chunk_len), ktrace_ull(m->image_size));
	return 0;
}

static int text_kernel(FILE *f, unsigned long long seq, const struct ktrace_rec_kernel *k)
{
	fprintf(f, "kernel %llu seq %llu: ", ktrace_ull(k->kernel_id), seq);
	put_str(f, k->name);
	if (k->demangled.len) {
		fputs(" (", f);
		put_str(f, k->demangled);
		fputc(')', f);
	}
	fprintf(f, " module %llu handle 0x%llx params %u (%u bytes, layout %s)\n", ktrace_ull(k->module_id),
		ktrace_ull(k->handle), k->nparams, k->param_bytes, ktrace_layout_source_name(k->layout_source));
	return 0;
}

static int text_alloc(FILE *f, unsigned long long seq, const struct ktrace_rec_alloc *a)
{
	fprintf(f, "alloc seq %llu: %s 0x%llx size %llu dev %d", seq, ktrace_alloc_kind_name(a->kind), ktrace_ull(a->base),
		ktrace_ull(a->size), a->device);
	if (a->stream)
		fprintf(f, " stream 0x%llx", ktrace_ull(a->stream));
	fputc('\n', f);
	return 0;
}

static int text_free(FILE *f, unsigned long long seq, const struct ktrace_rec_free *a)
{
	fprintf(f, "free seq %llu: %s 0x%llx size %llu", seq, ktrace_alloc_kind_name(a->kind), ktrace_ull(a->base),
		ktrace_ull(a->size));
	if (a->stream)
		fprintf(f, " stream 0x%llx", ktrace_ull(a->stream));
	fputc('\n', f);
	return 0;
}

/* " async", " 2d" as a copy's or memset's flags say. */
static void text_copy_flags(FILE *f, uint32_t flags)
{
	if (flags & KTRACE_COPYF_ASYNC)
		fputs(" async", f);
	if (flags & KTRACE_COPYF_2D)
		fputs(" 2d", f);
}

/* The end of a copy's or memset's line (its result, when it failed), and the
 * lines of its graph node and NVTX ranges. */
static void text_op_end(const struct record_ctx *c, FILE *f, uint32_t flags, int32_t result,
			const struct ktrace_graph_ref *g, const struct ktrace_range_ref *r)
{
	if (result)
		fprintf(f, " result %d", result);
	fputc('\n', f);
	if (flags & KTRACE_COPYF_GRAPH)
		ktrace_dump_text_graph_ref(f, g);
	if (flags & KTRACE_COPYF_RANGE)
		ktrace_dump_text_range_ref(f, c, r);
}

static int text_memcpy(const struct record_ctx *c, FILE *f, unsigned long long seq, const struct ktrace_rec_memcpy *m)
{
	fprintf(f, "memcpy op %llu seq %llu: %s %llu bytes dst 0x%llx src 0x%llx stream 0x%llx ctx 0x%llx tid %u",
		ktrace_ull(m->op_seq), seq, ktrace_copy_dir_name(m->dir), ktrace_ull(m->bytes), ktrace_ull(m->dst), ktrace_ull(m->src), ktrace_ull(m->stream),
		ktrace_ull(m->context), m->tid);
	text_copy_flags(f, m->flags);
	if (m->flags & KTRACE_COPYF_3D)
		fputs(" 3d", f);
	if (m->flags & KTRACE_COPYF_SRC_DIGEST)
		fprintf(f, " src_digest %016llx", ktrace_ull(m->src_digest));
	if (m->dst_digest_state == KTRACE_DST_DIGEST_HOST)
		fprintf(f, " dst_digest %016llx", ktrace_ull(m->dst_digest));
	else if (m->dst_digest_state == KTRACE_DST_DIGEST_DEVICE)
		fprintf(f, " dst_digest %016llx (device)", ktrace_ull(m->dst_digest));
	else if (m->dst_digest_state != KTRACE_DST_DIGEST_NONE)
		fprintf(f, " dst_digest - (%s)", ktrace_dst_digest_state_name(m->dst_digest_state));
	text_op_end(c, f, m->flags, m->result, &m->graph, &m->range);
	return 0;
}

static int text_memset(const struct record_ctx *c, FILE *f, unsigned long long seq, const struct ktrace_rec_memset *m)
{
	fprintf(f, "memset op %llu seq %llu: dst 0x%llx count %llu x %u bytes value 0x%llx stream 0x%llx ctx 0x%llx tid %u",
		ktrace_ull(m->op_seq), seq, ktrace_ull(m->dst), ktrace_ull(m->count), m->elem_size, ktrace_ull(m->value), ktrace_ull(m->stream),
		ktrace_ull(m->context), m->tid);
	text_copy_flags(f, m->flags);
	text_op_end(c, f, m->flags, m->result, &m->graph, &m->range);
	return 0;
}

static int text_note(FILE *f, unsigned long long seq, const struct ktrace_rec_note *n)
{
	fprintf(f, "note seq %llu: %s code %u: ", seq, ktrace_note_level_name(n->level), n->code);
	put_str(f, n->text);
	fputc('\n', f);
	return 0;
}

static int text_counters(FILE *f, unsigned long long seq, const struct ktrace_rec_counters *r)
{
	fprintf(f, "counters seq %llu:", seq);
	if (!r->ncounters)
		fputs(" all zero", f); /* the writer lists the non-zero ones only */
	for (uint32_t i = 0; i < r->ncounters; i++) {
		struct ktrace_counter k;
		ktrace_counters_get(r, i, &k);
		const char *nm = ktrace_counter_name(k.id);
		if (strcmp(nm, "unknown"))
			fprintf(f, " %s=%llu", nm, ktrace_ull(k.value));
		else
			fprintf(f, " counter%u=%llu", k.id, ktrace_ull(k.value));
	}
	fputc('\n', f);
	return 0;
}

static int text_end(FILE *f, unsigned long long seq, const struct ktrace_rec_end *e)
{
	fprintf(f, "end seq %llu: %s status %d, %llu records before, %llu ops (launches, copies, memsets)\n", seq,
		ktrace_end_reason_name(e->reason), e->status, ktrace_ull(e->records_written), ktrace_ull(e->launches));
	return 0;
}

static int text_module_unload(FILE *f, unsigned long long seq, const struct ktrace_rec_module_unload *m)
{
	fprintf(f, "module_unload seq %llu: module %llu\n", seq, ktrace_ull(m->module_id));
	return 0;
}

static void text_replay_buffer(FILE *f, uint32_t i, const struct ktrace_replay_buffer_result *b)
{
	const struct ktrace_replay_diff *d = &b->diff;

	fprintf(f, "  buffer %u: ", i);
	ktrace_put_escaped(f, b->name, strlen(b->name));
	fprintf(f, " argument %u type \"", b->arg_index);
	ktrace_put_escaped(f, b->type, strlen(b->type));
	fprintf(f, "\" as %s, 0x%llx size %llu, copy on %s, digest %016llx: %u replays differ, %llu of %llu "
		   "elements differ", ktrace_replay_elem_name(b->elem), ktrace_ull(b->base), ktrace_ull(b->size),
		ktrace_replay_place_name(b->place), ktrace_ull(b->digest_r0), b->replays_differing, ktrace_ull(d->differing),
		ktrace_ull(d->elements));
	if (d->differing) {
		fputs(", first at", f);
		for (uint32_t k = 0; k < d->nfirst; k++)
			fprintf(f, " %llu", ktrace_ull(d->first[k]));
		fprintf(f, ", max abs %.9g rel %.9g ulp %llu, %llu NaN against a number", d->max_abs, d->max_rel,
			ktrace_ull(d->max_ulp), ktrace_ull(d->nan_mismatches));
	}
	fputc('\n', f);
}

/* A replay's verdict: one line, one per buffer, then the paragraph. */
static int text_replay(FILE *f, unsigned long long seq, const struct ktrace_rec_replay *r)
{
	struct ktrace_replay_report rep;
	char *para;
	size_t n;

	if (ktrace_replay_report_parse(r->blob, r->blob_len, &rep))
		return -1;
	fprintf(f, "replay seq %llu: launch op %llu kernel %llu occurrence %llu: %s (%s), %u of %u replays, "
		   "%u distinct results in %u runs (the launch and its replays), launch result %d\n", seq,
		ktrace_ull(r->launch_seq), ktrace_ull(r->kernel_id), ktrace_ull(rep.occurrence), ktrace_replay_outcome_name(rep.outcome),
		ktrace_replay_reason_text(rep.reason), rep.runs_done, rep.runs_requested, rep.distinct,
		rep.runs_done + 1, rep.launch_result);
	for (uint32_t i = 0; i < rep.nbuffers; i++)
		text_replay_buffer(f, i, &rep.buffers[i]);
	n = ktrace_replay_report_format(&rep, NULL, 0);
	para = malloc(n + 1);
	if (para) {
		ktrace_replay_report_format(&rep, para, n + 1);
		fputs("  ", f);
		ktrace_put_escaped(f, para, n);
		fputc('\n', f);
	}
	free(para);
	ktrace_replay_report_free(&rep);
	return 0;
}

static int text_order(FILE *f, unsigned long long seq, const struct ktrace_rec_order *o)
{
	fprintf(f, "order seq %llu: %s before op %llu", seq, ktrace_order_op_name(o->op), ktrace_ull(o->launch_seq_before));
	if (ktrace_dump_order_names_stream(o->op))
		fprintf(f, " stream 0x%llx", ktrace_ull(o->stream));
	if (o->event)
		fprintf(f, " event 0x%llx", ktrace_ull(o->event));
	fprintf(f, " ctx 0x%llx dev %d tid %u", ktrace_ull(o->context), o->device, o->tid);
	if (o->op == KTRACE_ORDER_STREAM_CREATE)
		fprintf(f, " flags 0x%x%s priority %d", o->stream_flags,
			(o->stream_flags & KTRACE_STREAM_NON_BLOCKING) ? " (non-blocking)" : "", o->priority);
	fputc('\n', f);
	return 0;
}

/* A record type with no line of its own here: its fields as the record table
 * names and shows them ("<type> seq N: name value ..."). */
static int text_table(FILE *f, unsigned long long seq, const struct ktrace_record_desc *d,
		      const union ktrace_any_record *u)
{
	char names[512];

	fprintf(f, "%s seq %llu:", d->name, seq);
	for (uint16_t i = 0; i < d->nfields; i++) {
		const struct ktrace_field *fd = &d->fields[i];
		uint64_t v = ktrace_field_value(fd, u, 0);
		struct ktrace_str sv;

		if (fd->show == KT_SHOW_HIDDEN || fd->show == KT_SHOW_HOOK || (fd->valid && !fd->valid(u)))
			continue;
		fprintf(f, " %s ", fd->name);
		switch (fd->show) {
		case KT_SHOW_INT: fprintf(f, "%lld", (long long)(int64_t)v); break;
		case KT_SHOW_HEX: fprintf(f, "0x%llx", ktrace_ull(v)); break;
		case KT_SHOW_DIGEST: fprintf(f, "%016llx", ktrace_ull(v)); break;
		case KT_SHOW_ENUM: fputs(fd->names((uint32_t)v), f); break;
		case KT_SHOW_FLAGS: fputs(*ktrace_flag_names(v, fd->names, names, sizeof names, ",") ? names : "-", f); break;
		case KT_SHOW_STR: sv = ktrace_field_str(fd, u); ktrace_put_escaped(f, sv.ptr, sv.len); break;
		case KT_SHOW_SHAPE:
			fprintf(f, "(%llu,%llu,%llu)", ktrace_ull(v), ktrace_ull(ktrace_field_value(fd, u, 1)),
				ktrace_ull(ktrace_field_value(fd, u, 2)));
			break;
		default: fprintf(f, "%llu", ktrace_ull(v)); break;
		}
	}
	fputc('\n', f);
	return 0;
}

/* GPUTIME: the measured GPU start and end of a sampled launch (docs/format.md "GPUTIME"). */
static int text_gputime(const struct record_ctx *c, unsigned long long seq, const struct ktrace_rec_gputime *g)
{
	FILE *f = c->out;

	fprintf(f, "gputime seq %llu: op %llu%s GPU ", seq, ktrace_ull(g->op_seq),
		(g->flags & KTRACE_GPUTIMEF_GRAPH) ? " (graph launch)" : "");
	put_time(c, g->start_ns);
	fputs(" to ", f);
	put_time(c, g->end_ns);
	fprintf(f, " (%llu ns) stream 0x%llx ctx 0x%llx dev %d tid %u reference within %u ns\n",
		ktrace_ull(g->end_ns >= g->start_ns ? g->end_ns - g->start_ns : 0), ktrace_ull(g->stream), ktrace_ull(g->context),
		g->device, g->tid, g->ref_err_ns);
	return 0;
}

/* Any record but a header or a launch; -1 when it does not decode. */
static int text_other(const struct record_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	FILE *f = c->out;
	unsigned long long seq = ktrace_ull(p->seq);
	const struct ktrace_record_desc *d = ktrace_record_desc(p->type);
	union ktrace_any_record u;

	switch (p->type) {
	case KTRACE_REC_GRAPH: return ktrace_dump_text_graph(f, seq, rec, len);
	case KTRACE_REC_RANGE: return ktrace_dump_text_range(f, seq, rec, len);
	case KTRACE_REC_PYSTACK: return ktrace_dump_text_pystack(f, seq, rec, len);
	default: break;
	}
	if (!d) {
		fprintf(f, "record seq %llu: unknown type %u, %zu bytes (skipped)\n", seq, p->type, len);
		return 0;
	}
	if (d->decode(rec, len, &u))
		return -1;
	switch (p->type) {
	case KTRACE_REC_MODULE: return text_module(f, seq, &u.module);
	case KTRACE_REC_MODULE_IMAGE: return text_module_image(f, seq, &u.module_image);
	case KTRACE_REC_KERNEL: return text_kernel(f, seq, &u.kernel);
	case KTRACE_REC_ALLOC: return text_alloc(f, seq, &u.alloc);
	case KTRACE_REC_FREE: return text_free(f, seq, &u.free);
	case KTRACE_REC_MEMCPY: return text_memcpy(c, f, seq, &u.memcpy);
	case KTRACE_REC_MEMSET: return text_memset(c, f, seq, &u.memset);
	case KTRACE_REC_NOTE: return text_note(f, seq, &u.note);
	case KTRACE_REC_COUNTERS: return text_counters(f, seq, &u.counters);
	case KTRACE_REC_END: return text_end(f, seq, &u.end);
	case KTRACE_REC_MODULE_UNLOAD: return text_module_unload(f, seq, &u.module_unload);
	case KTRACE_REC_ORDER: return text_order(f, seq, &u.order);
	case KTRACE_REC_REPLAY: return text_replay(f, seq, &u.replay);
	case KTRACE_REC_GPUTIME: return text_gputime(c, seq, &u.gputime);
	default: return text_table(f, seq, d, &u);
	}
}

int ktrace_dump_text_record(const struct record_ctx *c, const struct ktrace_record_prefix *p, const void *rec,
			    size_t len, const struct ktrace_rec_kernel *k)
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
			ktrace_ull(p->seq), len);
	return rc;
}
