/* tools/reader/reader_lib.c: libktrace-reader.so, the trace reader for Python's
 * ktrace.load() (python/ktrace/_reader.py, through ctypes).
 *
 * Owns the flat, fixed-layout rows that Python reads: a trace is loaded with
 * the tools' model (trace_model.c, on format/'s reader and decoders: no
 * second parser), and handed out table by table in batches of C structs
 * whose layout python/ktrace/_reader.py mirrors (ktpy_row_size() lets it
 * check).  Strings point into the loaded trace and live until ktpy_close().
 * Argument values are formatted as ktrace-dump --json formats them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/model/array.h"
#include "tools/model/trace_model.h"
#include "tools/model/value.h"

#define KTPY_API __attribute__((visibility("default")))
#define KTPY_ABI 1

enum ktpy_table {
	KTPY_KERNELS = 1, KTPY_PARAMS = 2, KTPY_LAUNCHES = 3, KTPY_REGIONS = 4,
	KTPY_OPS = 5, KTPY_NOTES = 6, KTPY_ORDERS = 7, KTPY_GPUTIMES = 8,
};

struct ktpy_header {
	uint64_t start_realtime_ns, start_monotonic_ns, nrecords;
	uint32_t pid, rank, digest_alg, format_minor;
	int32_t have_end, end_reason, end_status, truncated;
	const char *host, *cmdline, *version, *config, *truncated_msg;
};

struct ktpy_kernel {
	uint64_t id, module_id, handle, module_digest;
	uint32_t layout_source, param_bytes, nparams, known;
	uint64_t first_param; /* index of its first row in KTPY_PARAMS */
	const char *name, *demangled;
};

struct ktpy_param {
	uint64_t kernel_index;
	uint32_t ordinal, kind, name_source, offset, size, flags;
	uint32_t written, written_source; /* format 1.14: enum ktrace_param_written, ktrace_written_source */
	const char *name, *type;
};

struct ktpy_launch {
	uint64_t launch_seq, rec_seq, time_ns, kernel_id, kernel_index, context, stream;
	uint64_t first_region; /* index of its first row in KTPY_REGIONS */
	uint32_t tid, api, flags, shared_mem, nregions, param_bytes_len;
	int32_t device, result;
	uint32_t grid[3], block[3], cluster[3], reserved;
};

struct ktpy_region {
	uint64_t launch_index, ptr, alloc_base, alloc_size, hash_len, pre_hash, post_hash;
	uint32_t param_offset, ordinal, flags, reserved;
};

struct ktpy_op {
	uint64_t op_seq, time_ns, dst, src, bytes, value, stream, context, src_digest, dst_digest;
	uint32_t type, dir, dir_inferred, flags, elem_size, tid, dst_digest_state;
	int32_t result;
};

struct ktpy_note {
	uint64_t rec_seq, time_ns;
	uint32_t level, code;
	const char *text;
};

struct ktpy_order {
	uint64_t seq_before, rec_seq, time_ns, stream, event, context;
	uint32_t op, tid, stream_flags;
	int32_t device, priority, reserved;
};

struct ktpy_gputime {
	uint64_t op_seq, rec_seq, context, stream, start_ns, end_ns, ref_ns;
	uint32_t ref_err_ns, flags, tid;
	int32_t device;
};

struct ktpy_trace {
	struct tm_trace t;
	char *path;
	uint64_t *first_region; /* per launch */
	uint64_t *first_param;  /* per kernel */
	size_t nregions, nparams;
};

KTPY_API uint32_t ktpy_abi(void)
{
	return KTPY_ABI;
}

KTPY_API size_t ktpy_row_size(int table)
{
	switch (table) {
	case 0: return sizeof(struct ktpy_header);
	case KTPY_KERNELS: return sizeof(struct ktpy_kernel);
	case KTPY_PARAMS: return sizeof(struct ktpy_param);
	case KTPY_LAUNCHES: return sizeof(struct ktpy_launch);
	case KTPY_REGIONS: return sizeof(struct ktpy_region);
	case KTPY_OPS: return sizeof(struct ktpy_op);
	case KTPY_NOTES: return sizeof(struct ktpy_note);
	case KTPY_ORDERS: return sizeof(struct ktpy_order);
	case KTPY_GPUTIMES: return sizeof(struct ktpy_gputime);
	default: return 0;
	}
}

KTPY_API void ktpy_close(struct ktpy_trace *p)
{
	if (!p)
		return;
	ktrace_tm_free(&p->t);
	free(p->first_region);
	free(p->first_param);
	free(p->path);
	free(p);
}

/* Where each launch's regions and each kernel's parameters start in the flat
 * tables; the entry after the last holds the table's length. */
static int index_tables(struct ktpy_trace *p)
{
	const struct tm_trace *t = &p->t;
	p->first_region = malloc((t->nlaunches + 1) * sizeof *p->first_region);
	p->first_param = malloc((t->nkernels + 1) * sizeof *p->first_param);
	if (!p->first_region || !p->first_param)
		return -1;
	for (size_t i = 0; i < t->nlaunches; i++) {
		p->first_region[i] = p->nregions;
		p->nregions += t->launches[i].look->nregions;
	}
	for (size_t i = 0; i < t->nkernels; i++) {
		p->first_param[i] = p->nparams;
		p->nparams += t->kernels[i].nparams;
	}
	p->first_region[t->nlaunches] = p->nregions;
	p->first_param[t->nkernels] = p->nparams;
	return 0;
}

KTPY_API struct ktpy_trace *ktpy_open(const char *path, int allow_truncated, char *err, size_t errlen)
{
	struct ktpy_trace *p = calloc(1, sizeof *p);
	if (!p || !(p->path = strdup(path))) {
		free(p);
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	if (ktrace_tm_load(&p->t, p->path, allow_truncated, err, errlen)) {
		free(p->path);
		free(p);
		return NULL;
	}
	if (index_tables(p)) {
		snprintf(err, errlen, "%s: out of memory", path);
		ktpy_close(p);
		return NULL;
	}
	return p;
}

KTPY_API void ktpy_header(const struct ktpy_trace *p, struct ktpy_header *h)
{
	const struct tm_trace *t = &p->t;
	*h = (struct ktpy_header){ .start_realtime_ns = t->start_realtime_ns,
				   .start_monotonic_ns = t->start_monotonic_ns, .nrecords = t->nrecords,
				   .pid = t->pid, .rank = t->rank, .digest_alg = t->digest_alg,
				   .format_minor = t->format_minor, .have_end = t->have_end,
				   .end_reason = (int32_t)t->end_reason, .end_status = t->end_status,
				   .truncated = t->truncated, .host = t->host, .cmdline = t->cmdline,
				   .version = t->version, .config = t->config, .truncated_msg = t->truncated_msg };
}

/* The latest value of counter id (0 when never written). */
KTPY_API uint64_t ktpy_counter(const struct ktpy_trace *p, uint32_t id)
{
	return id < sizeof p->t.counters / sizeof p->t.counters[0] ? p->t.counters[id] : 0;
}

KTPY_API size_t ktpy_count(const struct ktpy_trace *p, int table)
{
	switch (table) {
	case KTPY_KERNELS: return p->t.nkernels;
	case KTPY_PARAMS: return p->nparams;
	case KTPY_LAUNCHES: return p->t.nlaunches;
	case KTPY_REGIONS: return p->nregions;
	case KTPY_OPS: return p->t.nops;
	case KTPY_NOTES: return p->t.nnotes;
	case KTPY_ORDERS: return p->t.norders;
	case KTPY_GPUTIMES: return p->t.ngputimes;
	default: return 0;
	}
}

static void fill_kernel(const struct ktpy_trace *p, size_t i, struct ktpy_kernel *o)
{
	const struct tm_kernel *k = &p->t.kernels[i];
	*o = (struct ktpy_kernel){ .id = k->id, .module_id = k->module_id, .handle = k->handle,
				   .module_digest = k->module_digest, .layout_source = k->layout_source,
				   .param_bytes = k->param_bytes, .nparams = k->nparams, .known = (uint32_t)k->known,
				   .first_param = p->first_param[i], .name = k->name, .demangled = k->demangled };
}

static uint64_t u64_at(const void *p)
{
	return *(const uint64_t *)p;
}

/* The index of the last entry of first[0..n) that is <= row (first is sorted). */
static size_t owner_of(const uint64_t *first, size_t n, uint64_t row)
{
	size_t above = ktrace_upper_bound(first, n, sizeof *first, row, u64_at);

	return above ? above - 1 : 0;
}

static void fill_param(const struct tm_param *q, size_t k, struct ktpy_param *o)
{
	*o = (struct ktpy_param){ .kernel_index = k, .ordinal = q->ordinal, .kind = q->kind,
				  .name_source = q->name_source, .offset = q->offset, .size = q->size,
				  .flags = q->flags, .written = q->written, .written_source = q->written_source,
				  .name = q->name, .type = q->type };
}

static void fill_launch(const struct ktpy_trace *p, size_t i, struct ktpy_launch *o)
{
	const struct tm_launch *l = &p->t.launches[i];
	*o = (struct ktpy_launch){ .launch_seq = l->seq, .rec_seq = ktrace_tm_rec_seq(l), .time_ns = l->time_ns,
				   .kernel_id = l->look->kernel->id, .kernel_index = (uint64_t)(l->look->kernel - p->t.kernels),
				   .context = l->look->context, .stream = l->look->stream,
				   .first_region = p->first_region[i], .tid = l->look->tid, .api = l->look->api, .flags = l->flags,
				   .shared_mem = l->look->shape.shared_mem, .nregions = l->look->nregions,
				   .param_bytes_len = l->look->param_bytes_len, .device = l->look->device, .result = l->look->result };
	memcpy(o->grid, l->look->shape.grid, sizeof o->grid);
	memcpy(o->block, l->look->shape.block, sizeof o->block);
	memcpy(o->cluster, ktrace_tm_cluster(l), sizeof o->cluster);
}

static void fill_region(const struct tm_trace *t, const struct tm_region *g, size_t l, struct ktpy_region *o)
{
	const struct tm_extent *e = ktrace_tm_region_extent(t, g);
	*o = (struct ktpy_region){ .launch_index = l, .ptr = e->ptr, .alloc_base = e->alloc.base,
				   .alloc_size = e->alloc.size, .hash_len = e->hash_len, .pre_hash = g->pre_hash,
				   .post_hash = g->post_hash, .param_offset = g->param_offset,
				   .ordinal = g->ordinal, .flags = g->flags };
}

/* Rows [first, first + n) of a flat table (KTPY_PARAMS: each kernel's
 * parameters in turn; KTPY_REGIONS: each launch's regions): the owner of the
 * first is found by bisection, the rest by stepping on. */
static void fill_flat(const struct ktpy_trace *p, int table, size_t first, size_t n, void *out)
{
	int params = table == KTPY_PARAMS;
	const uint64_t *start = params ? p->first_param : p->first_region;
	size_t k = owner_of(start, params ? p->t.nkernels : p->t.nlaunches, first);
	for (size_t i = 0; i < n; i++) {
		size_t r = first + i;
		while (r >= start[k + 1])
			k++;
		if (params)
			fill_param(&p->t.kernels[k].params[r - start[k]], k, (struct ktpy_param *)out + i);
		else
			fill_region(&p->t, &p->t.launches[k].regions[r - start[k]], k, (struct ktpy_region *)out + i);
	}
}

static void fill_op(const struct tm_op *s, struct ktpy_op *o)
{
	*o = (struct ktpy_op){ .op_seq = s->seq, .time_ns = s->time_ns, .dst = s->dst, .src = s->src,
			       .bytes = s->bytes, .value = s->value, .stream = s->stream, .context = s->context,
			       .src_digest = s->src_digest, .dst_digest = s->dst_digest, .type = s->type,
			       .dir = s->dir, .dir_inferred = s->dir_inferred, .flags = s->flags,
			       .elem_size = s->elem_size, .tid = s->tid, .dst_digest_state = s->dst_digest_state,
			       .result = s->result };
}

static void fill_order(const struct tm_order *s, struct ktpy_order *o)
{
	*o = (struct ktpy_order){ .seq_before = s->seq_before, .rec_seq = s->rec_seq, .time_ns = s->time_ns,
				  .stream = s->stream, .event = s->event, .context = s->context, .op = s->op,
				  .tid = s->tid, .stream_flags = s->stream_flags, .device = s->device,
				  .priority = s->priority };
}

static void fill_gputime(const struct tm_gputime *s, struct ktpy_gputime *o)
{
	*o = (struct ktpy_gputime){ .op_seq = s->op_seq, .rec_seq = s->rec_seq, .context = s->context,
				    .stream = s->stream, .start_ns = s->start_ns, .end_ns = s->end_ns, .ref_ns = s->ref_ns,
				    .ref_err_ns = s->ref_err_ns, .flags = s->flags, .tid = s->tid, .device = s->device };
}

/* Rows [first, first + n) of table into out (an array of its struct); returns how many. */
KTPY_API size_t ktpy_rows(const struct ktpy_trace *p, int table, size_t first, size_t n, void *out)
{
	size_t total = ktpy_count(p, table);
	if (first >= total)
		return 0;
	if (n > total - first)
		n = total - first;
	for (size_t i = 0; i < n; i++) {
		size_t r = first + i;
		switch (table) {
		case KTPY_KERNELS: fill_kernel(p, r, (struct ktpy_kernel *)out + i); break;
		case KTPY_LAUNCHES: fill_launch(p, r, (struct ktpy_launch *)out + i); break;
		case KTPY_OPS: fill_op(&p->t.ops[r], (struct ktpy_op *)out + i); break;
		case KTPY_ORDERS: fill_order(&p->t.orders[r], (struct ktpy_order *)out + i); break;
		case KTPY_GPUTIMES: fill_gputime(&p->t.gputimes[r], (struct ktpy_gputime *)out + i); break;
		case KTPY_NOTES: {
			struct ktpy_note *o = (struct ktpy_note *)out + i;
			const struct tm_note *s = &p->t.notes[r];
			*o = (struct ktpy_note){ .rec_seq = s->rec_seq, .time_ns = s->time_ns, .level = s->level,
						 .code = s->code, .text = s->text };
			break;
		}
		default: i = n; break; /* the flat tables below */
		}
	}
	if (table == KTPY_PARAMS || table == KTPY_REGIONS)
		fill_flat(p, table, first, n, out);
	return n;
}

/* One field of every row of table, size bytes at offset in the table's row
 * struct, one after another into out (count(table) * size bytes): a column
 * for numpy (ktrace.columns()) without a Python object per row.  Returns the
 * number of rows, or (size_t)-1 for a field outside the row or no memory. */
KTPY_API size_t ktpy_column(const struct ktpy_trace *p, int table, size_t offset, size_t size, void *out)
{
	enum { BATCH = 4096 };
	size_t row = ktpy_row_size(table), total = ktpy_count(p, table);
	unsigned char *rows, *o = out;

	if (!row || !size || offset > row || size > row - offset)
		return (size_t)-1;
	if (!(rows = malloc(BATCH * row)))
		return (size_t)-1;
	for (size_t first = 0; first < total;) {
		size_t n = ktpy_rows(p, table, first, BATCH, rows);

		for (size_t i = 0; i < n; i++, o += size)
			memcpy(o, rows + i * row + offset, size);
		first += n;
	}
	free(rows);
	return total;
}

/* The value of parameter j of launch i's kernel, as ktrace-dump --json writes
 * it (a JSON number, string or null), into buf; returns buf ("null" when j is
 * out of range). */
KTPY_API const char *ktpy_arg_value(const struct ktpy_trace *p, size_t i, uint32_t j, char *buf, size_t cap)
{
	if (i >= p->t.nlaunches || j >= p->t.launches[i].look->kernel->nparams) {
		snprintf(buf, cap, "null");
		return buf;
	}
	const struct tm_launch *l = &p->t.launches[i];
	const struct tm_param *q = &l->look->kernel->params[j];
	struct ktrace_param_desc d = { .ordinal = q->ordinal, .kind = q->kind, .offset = q->offset, .size = q->size,
				       .flags = q->flags, .type = { q->type, (uint16_t)strnlen(q->type, 65535) } };
	return ktrace_param_value(&d, ktrace_tm_param_bytes(l), l->look->param_bytes_len, 1, buf, cap);
}

/* Names as ktrace-dump --json writes them: what 1 launch api, 2 copy
 * direction, 3 delivered-digest state, 4 note level, 5 end reason, 6
 * parameter kind, 7 name source, 8 layout source, 9 ORDER op, 10 counter;
 * 11 launch flags and 12 region flags (comma-separated, into buf); 13 a
 * parameter's written, 14 what decided it. */
KTPY_API const char *ktpy_name(int what, uint32_t v, char *buf, size_t cap)
{
	switch (what) {
	case 1: return ktrace_launch_api_name(v);
	case 2: return ktrace_copy_dir_name(v);
	case 3: return ktrace_dst_digest_state_name(v);
	case 4: return ktrace_note_level_name(v);
	case 5: return ktrace_end_reason_name(v);
	case 6: return ktrace_param_kind_name((uint8_t)v);
	case 7: return ktrace_name_source_name((uint8_t)v);
	case 8: return ktrace_layout_source_name(v);
	case 9: return ktrace_order_op_name(v);
	case 10: return ktrace_counter_name(v);
	case 11: return ktrace_flag_names(v, ktrace_launch_flag_name, buf, cap, ",");
	case 12: return ktrace_flag_names((uint16_t)v, ktrace_region_flag_name, buf, cap, ",");
	case 13: return ktrace_param_written_name((uint8_t)v);
	case 14: return ktrace_written_source_name((uint8_t)v);
	default: return "";
	}
}
