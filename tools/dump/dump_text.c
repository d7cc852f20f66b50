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

static void sb_time(const struct record_ctx *c, struct ktrace_sb *sb, uint64_t t)
{
	if (c->have_header && t >= c->start_mono_ns) {
		uint64_t d = t - c->start_mono_ns;
		KTRACE_SB_LIT(sb, "t=+");
		ktrace_sb_u64(sb, d / 1000000000ull);
		ktrace_sb_putc(sb, '.');
		ktrace_sb_u64_pad(sb, d % 1000000000ull, 9);
	} else {
		KTRACE_SB_LIT(sb, "t=");
		ktrace_sb_u64(sb, t);
	}
}

static void put_time(const struct record_ctx *c, uint64_t t)
{
	char storage[64];
	struct ktrace_sb sb;

	ktrace_sb_init(&sb, storage, sizeof storage);
	sb_time(c, &sb, t);
	ktrace_sb_flush(&sb, c->out);
	ktrace_sb_free(&sb);
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

static void sb_str(struct ktrace_sb *sb, struct ktrace_str s)
{
	ktrace_sb_escaped(sb, s.ptr, s.len);
}

static void put_kernel_name(struct ktrace_sb *sb, const struct ktrace_rec_kernel *k, uint64_t id)
{
	if (!k)
		ktrace_sb_printf(sb, "<unknown kernel %llu>", ktrace_ull(id));
	else if (k->demangled.len)
		sb_str(sb, k->demangled);
	else if (k->name.len)
		sb_str(sb, k->name);
	else
		ktrace_sb_printf(sb, "<unnamed kernel %llu>", ktrace_ull(id));
}

static void put_region(const struct record_ctx *c, struct ktrace_sb *sb, const struct ktrace_region *g)
{
	const char *extent = ktrace_region_extent_name(c->exactness_known, g);
	char fl[96];
	if (g->flags & KTRACE_REGIONF_COLL_BUFFER) { /* param_offset names the COLL record and the buffer */
		ktrace_sb_printf(sb, "    coll %u %s", g->param_offset >> 1, g->param_offset & 1 ? "recv" : "send");
	} else {
		KTRACE_SB_LIT(sb, "    @");
		ktrace_sb_u64(sb, g->param_offset);
	}
	KTRACE_SB_LIT(sb, " ptr 0x");
	ktrace_sb_hex(sb, g->ptr, 1);
	if (g->alloc_base) {
		KTRACE_SB_LIT(sb, " alloc 0x");
		ktrace_sb_hex(sb, g->alloc_base, 1);
		KTRACE_SB_LIT(sb, "+0x");
		ktrace_sb_hex(sb, g->ptr - g->alloc_base, 1);
		KTRACE_SB_LIT(sb, " size ");
		ktrace_sb_u64(sb, g->alloc_size);
	} else {
		KTRACE_SB_LIT(sb, " alloc ?");
	}
	if (g->flags & KTRACE_REGIONF_UNHASHED || !g->hash_len) {
		KTRACE_SB_LIT(sb, " not hashed");
	} else {
		KTRACE_SB_LIT(sb, " len ");
		ktrace_sb_u64(sb, g->hash_len);
		if (extent) {
			ktrace_sb_putc(sb, ' ');
			ktrace_sb_puts(sb, extent);
		}
		if (g->flags & KTRACE_REGIONF_PRE) {
			KTRACE_SB_LIT(sb, " pre ");
			ktrace_sb_hex(sb, g->pre_hash, 16);
		} else {
			KTRACE_SB_LIT(sb, " pre -");
		}
		if (g->flags & KTRACE_REGIONF_PRE_CARRIED) {
			KTRACE_SB_LIT(sb, " (carried from op ");
			ktrace_sb_u64(sb, g->pre_from);
			ktrace_sb_putc(sb, ')');
		}
		if (g->flags & KTRACE_REGIONF_POST) {
			KTRACE_SB_LIT(sb, " post ");
			ktrace_sb_hex(sb, g->post_hash, 16);
			if (g->flags & KTRACE_REGIONF_POST_CARRIED)
				KTRACE_SB_LIT(sb, " (read-only: the pre-digest)");
		} else {
			KTRACE_SB_LIT(sb, " post -");
		}
	}
	uint16_t extra = g->flags & (uint16_t)~(KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST | KTRACE_REGIONF_UNHASHED |
						 KTRACE_REGIONF_EXACT | KTRACE_REGIONF_SIGNATURE |
						 KTRACE_REGIONF_PRE_CARRIED | KTRACE_REGIONF_POST_CARRIED);
	if (extra)
		ktrace_sb_printf(sb, " (%s)", ktrace_flag_names(extra, ktrace_region_flag_name, fl, sizeof fl, ","));
	if (ktrace_region_out(g))
		ktrace_sb_puts(sb, " [OUT]");
	ktrace_sb_putc(sb, '\n');
}

/* What every launch of a kernel repeats, formatted once per kernel: its name
 * as the launch line shows it, and each parameter's "  arg N name (type) = ".
 * A slot per kernel id, valid while the kernel's names and parameter table
 * are byte-for-byte those it was made from. */
#define KERNEL_TEXT_SLOTS 256
struct kernel_text {
	uint8_t *key;		/* name, demangled and params_raw it was made from, one after another */
	size_t key_len;
	int used;
	struct ktrace_sb text;	/* the name, then each parameter's prefix */
	size_t name_end;
	size_t *arg_end;	/* where parameter i's prefix ends */
};

static int kernel_text_matches(const struct kernel_text *t, const struct ktrace_rec_kernel *k)
{
	const uint8_t *key = t->key;

	return t->used && t->key_len == (size_t)k->name.len + k->demangled.len + k->params_raw_len &&
	       !memcmp(key, k->name.ptr, k->name.len) && !memcmp(key + k->name.len, k->demangled.ptr, k->demangled.len) &&
	       !memcmp(key + k->name.len + k->demangled.len, k->params_raw, k->params_raw_len);
}

static void arg_prefix(struct ktrace_sb *sb, const struct ktrace_param_desc *d)
{
	KTRACE_SB_LIT(sb, "  arg ");
	ktrace_sb_u64(sb, d->ordinal);
	ktrace_sb_putc(sb, ' ');
	if (d->name.len) {
		sb_str(sb, d->name);
	} else {
		KTRACE_SB_LIT(sb, "arg");
		ktrace_sb_u64(sb, d->ordinal);
	}
	if (d->type.len) {
		KTRACE_SB_LIT(sb, " (");
		sb_str(sb, d->type);
		ktrace_sb_putc(sb, ')');
	}
	KTRACE_SB_LIT(sb, " = ");
}

/* The kernel's text (NULL when memory ran out). */
static const struct kernel_text *kernel_text(const struct ktrace_rec_kernel *k)
{
	static _Thread_local struct kernel_text slots[KERNEL_TEXT_SLOTS];
	struct kernel_text *t = &slots[k->kernel_id % KERNEL_TEXT_SLOTS];
	size_t key_len = (size_t)k->name.len + k->demangled.len + k->params_raw_len;

	if (kernel_text_matches(t, k))
		return t;
	t->used = 0;
	free(t->key);
	free(t->arg_end);
	t->key = malloc(key_len ? key_len : 1);
	t->arg_end = malloc((k->nparams ? k->nparams : 1) * sizeof *t->arg_end);
	t->text.len = 0;
	put_kernel_name(&t->text, k, k->kernel_id);
	t->name_end = t->text.len;
	for (uint32_t i = 0; t->arg_end && i < k->nparams; i++) {
		struct ktrace_param_desc d;
		if (!ktrace_kernel_param(k, i, &d))
			arg_prefix(&t->text, &d);
		t->arg_end[i] = t->text.len;
	}
	if (!t->key || !t->arg_end || t->text.oom) {
		ktrace_sb_free(&t->text);
		return NULL;
	}
	memcpy(t->key, k->name.ptr, k->name.len);
	memcpy(t->key + k->name.len, k->demangled.ptr, k->demangled.len);
	memcpy(t->key + k->name.len + k->demangled.len, k->params_raw, k->params_raw_len);
	t->key_len = key_len;
	t->used = 1;
	return t;
}

/* " 4x1x1": a grid, block or cluster shape. */
static void sb_dim3(struct ktrace_sb *sb, const uint32_t d[3])
{
	ktrace_sb_putc(sb, ' ');
	ktrace_sb_u64(sb, d[0]);
	ktrace_sb_putc(sb, 'x');
	ktrace_sb_u64(sb, d[1]);
	ktrace_sb_putc(sb, 'x');
	ktrace_sb_u64(sb, d[2]);
}

/* A launch's first lines: what, when, which kernel, its shape and stream. */
static void launch_head(const struct record_ctx *c, struct ktrace_sb *sb, const struct ktrace_record_prefix *p,
			const struct ktrace_rec_launch *l, const struct ktrace_rec_kernel *k,
			const struct kernel_text *kt)
{
	char fl[160];
	KTRACE_SB_LIT(sb, "launch op ");
	ktrace_sb_u64(sb, l->launch_seq);
	KTRACE_SB_LIT(sb, " seq ");
	ktrace_sb_u64(sb, p->seq);
	ktrace_sb_putc(sb, ' ');
	sb_time(c, sb, p->time_ns);
	KTRACE_SB_LIT(sb, " kernel ");
	ktrace_sb_u64(sb, l->kernel_id);
	ktrace_sb_putc(sb, ' ');
	if (kt)
		ktrace_sb_put(sb, kt->text.buf, kt->name_end);
	else
		put_kernel_name(sb, k, l->kernel_id);
	KTRACE_SB_LIT(sb, "\n  grid");
	sb_dim3(sb, l->grid);
	KTRACE_SB_LIT(sb, " block");
	sb_dim3(sb, l->block);
	if (l->cluster[0] || l->cluster[1] || l->cluster[2]) {
		KTRACE_SB_LIT(sb, " cluster");
		sb_dim3(sb, l->cluster);
	}
	KTRACE_SB_LIT(sb, " smem ");
	ktrace_sb_u64(sb, l->shared_mem);
	KTRACE_SB_LIT(sb, " stream 0x");
	ktrace_sb_hex(sb, l->stream, 1);
	KTRACE_SB_LIT(sb, " ctx 0x");
	ktrace_sb_hex(sb, l->context, 1);
	KTRACE_SB_LIT(sb, " dev ");
	ktrace_sb_i64(sb, l->device);
	KTRACE_SB_LIT(sb, " tid ");
	ktrace_sb_u64(sb, l->tid);
	KTRACE_SB_LIT(sb, " api ");
	ktrace_sb_puts(sb, ktrace_launch_api_name(l->api));
	if (l->result)
		ktrace_sb_printf(sb, " result %d", l->result);
	if (l->flags)
		ktrace_sb_printf(sb, " flags %s", ktrace_flag_names(l->flags, ktrace_launch_flag_name, fl, sizeof fl, ","));
	ktrace_sb_putc(sb, '\n');
	if (l->flags & (KTRACE_LAUNCHF_GRAPH | KTRACE_LAUNCHF_GRAPH_ITER | KTRACE_LAUNCHF_RANGE)) {
		ktrace_sb_flush(sb, c->out); /* these write to the FILE themselves */
		if (l->flags & KTRACE_LAUNCHF_GRAPH)
			ktrace_dump_text_graph_ref(c->out, &l->graph);
		if (l->flags & KTRACE_LAUNCHF_GRAPH_ITER)
			ktrace_dump_text_graph_iter(c->out, &l->graph);
		if (l->flags & KTRACE_LAUNCHF_RANGE)
			ktrace_dump_text_range_ref(c->out, c, &l->range);
	}
	uint32_t unv = ktrace_unv_record_mask(l);
	if (unv) {
		char why[512];
		ktrace_sb_printf(sb, "  unverifiable: %s\n", ktrace_unv_record_text(l, unv, why, sizeof why));
	}
}

/* One argument's line (its prefix from the kernel's text, else made now),
 * then the regions of its pointer not shown yet (used[r] marks them). */
static void launch_arg(const struct record_ctx *c, struct ktrace_sb *sb, const struct ktrace_rec_launch *l,
		       const struct ktrace_param_desc *d, const char *prefix, size_t prefix_len, unsigned char *used)
{
	if (prefix)
		ktrace_sb_put(sb, prefix, prefix_len);
	else
		arg_prefix(sb, d);
	ktrace_sb_param_value(sb, d, l->param_bytes, l->param_bytes_len, 0);
	if (d->flags & KTRACE_PARAMF_SCRATCH)
		KTRACE_SB_LIT(sb, " [scratch]");
	ktrace_sb_putc(sb, '\n');
	for (uint32_t r = 0; r < l->nregions; r++) {
		struct ktrace_region g;
		ktrace_launch_region(l, r, &g);
		if (g.ordinal != d->ordinal || (used && used[r]))
			continue;
		if (used)
			used[r] = 1;
		put_region(c, sb, &g);
	}
}

/* A launch's block, formatted in memory and written at once. */
static int text_launch(const struct record_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len,
		       const struct ktrace_rec_kernel *k)
{
	static _Thread_local struct ktrace_sb sb;
	struct ktrace_rec_launch l;
	unsigned char few[64], *used = few;
	if (ktrace_decode_launch(rec, len, &l))
		return -1;
	const struct kernel_text *kt = k ? kernel_text(k) : NULL;
	sb.len = 0;
	launch_head(c, &sb, p, &l, k, kt);

	uint32_t nparams = k ? k->nparams : 0;
	if (l.nregions > sizeof few)
		used = calloc(l.nregions, 1);
	else
		memset(few, 0, l.nregions);
	for (uint32_t i = 0; i < nparams; i++) {
		struct ktrace_param_desc d;
		size_t from = !kt ? 0 : i ? kt->arg_end[i - 1] : kt->name_end;
		if (!ktrace_kernel_param(k, i, &d))
			launch_arg(c, &sb, &l, &d, kt ? kt->text.buf + from : NULL, kt ? kt->arg_end[i] - from : 0, used);
	}
	if (!nparams && l.param_bytes_len) {
		ktrace_sb_printf(&sb, "  params (%u bytes, layout unknown): ", l.param_bytes_len);
		ktrace_sb_hex_bytes(&sb, l.param_bytes, l.param_bytes_len);
		ktrace_sb_putc(&sb, '\n');
	}
	int header = 0;
	for (uint32_t r = 0; r < l.nregions; r++) {
		if (used && used[r])
			continue;
		if (!header++)
			ktrace_sb_puts(&sb, "  regions without a known parameter:\n");
		struct ktrace_region g;
		ktrace_launch_region(&l, r, &g);
		put_region(c, &sb, &g);
	}
	if (used != few)
		free(used);
	ktrace_sb_flush(&sb, c->out);
	if (sb.oom) {
		ktrace_sb_free(&sb);
		return -1;
	}
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

/* " read_only 0,2" : the ordinals of the parameters the kernel's code is
 * known to write through so (`written`); nothing when there is none. */
static void put_written(FILE *f, const struct ktrace_rec_kernel *k, uint8_t written)
{
	const char *sep = " ";
	struct ktrace_param_desc d;

	for (uint32_t i = 0; i < k->nparams; i++) {
		if (ktrace_kernel_param(k, i, &d) || d.written != written)
			continue;
		if (*sep == ' ')
			fprintf(f, " %s", ktrace_param_written_name(written));
		fprintf(f, "%s%u", sep, i);
		sep = ",";
	}
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
	fprintf(f, " module %llu handle 0x%llx params %u (%u bytes, layout %s)", ktrace_ull(k->module_id),
		ktrace_ull(k->handle), k->nparams, k->param_bytes, ktrace_layout_source_name(k->layout_source));
	put_written(f, k, KTRACE_WRITTEN_READ_ONLY);
	put_written(f, k, KTRACE_WRITTEN_WRITTEN);
	fputc('\n', f);
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
	if (flags & KTRACE_COPYF_GRAPH_ITER)
		ktrace_dump_text_graph_iter(f, g);
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
