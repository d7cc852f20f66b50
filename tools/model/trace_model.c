/* tools/model/trace_model.c: loads a trace file into the in-memory model of trace_model.h.
 *
 * Owns record-to-model conversion, the arena that holds every string and
 * byte array of a loaded trace, kernel resolution for launches, and the
 * ordering of launches and copy/set operations by sequence number, and of
 * ORDER records by the launch_seq they were made before.
 */
#include "tools/model/trace_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/trace_reader.h"
#include "tools/model/array.h"

const struct tm_refs ktrace_tm_no_refs;

/* ---- arena ------------------------------------------------------------- */

struct tm_arena_block {
	struct tm_arena_block *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[]; /* pieces 8-byte aligned (the model's widest member) */
};

#define TM_ARENA_BLOCK (1u << 20)

static void *arena_alloc(struct tm_trace *t, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	struct tm_arena_block *b = t->arena;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > TM_ARENA_BLOCK / 4 ? n : TM_ARENA_BLOCK;
		struct tm_arena_block *nb = malloc(sizeof *nb + cap);
		if (!nb)
			return NULL;
		nb->cap = cap;
		nb->used = 0;
		if (b && cap != TM_ARENA_BLOCK) {
			/* a big one-off: keep filling the current block afterwards */
			nb->next = b->next;
			b->next = nb;
			nb->used = n;
			return nb->data;
		}
		nb->next = b;
		t->arena = b = nb;
	}
	void *p = b->data + b->used;
	b->used += n;
	return p;
}

static const char *arena_str(struct tm_trace *t, const struct ktrace_str *s)
{
	char *p = arena_alloc(t, (size_t)s->len + 1);
	if (!p)
		return NULL;
	if (s->len)
		memcpy(p, s->ptr, s->len);
	p[s->len] = '\0';
	return p;
}

static void *arena_dup(struct tm_trace *t, const void *src, size_t n)
{
	void *p = arena_alloc(t, n ? n : 1);
	if (p && n)
		memcpy(p, src, n);
	return p;
}

struct tm_module_digest {
	uint64_t id, digest;
};

struct tm_range {
	uint64_t base, size;
	uint32_t host; /* host memory (pinned / registered) */
};

struct load_state {
	struct tm_trace *t;
	size_t cap_k, cap_l, cap_o, cap_n, cap_m, cap_r, cap_p;
	size_t cap_ord, cap_g, cap_py, cap_gt, cap_coll, cap_comm, cap_cut;
	struct tm_module_digest *mods;
	size_t nmods;
	uint64_t time_ns; /* of the record being taken */
	struct tm_range *ranges; /* ALLOC records: to infer unknown copy directions */
	size_t nranges;
	struct tm_intern extents; /* the regions' extents, each once (t->extents) */
	struct tm_intern looks;  /* the launches' looks, each once (t->looks) */
	struct tm_beside beside;     /* beside.like: loaded beside it (ktrace_tm_load_beside), or NULL */
	unsigned char *scratch;      /* beside like: a launch's piece, before it is compared */
	size_t cap_scratch;
	struct tm_extent *values;    /* the extents of a launch's regions, before they are numbered */
	size_t cap_values;
	char *err;
	size_t errlen;
};

/* ---- sorting and lookup -------------------------------------------------- */

/* A qsort comparator, name, of an array of type: by its member k1, then by
 * k2 (k1 again: by one member). */
#define COMPARE_BY(name, type, k1, k2)                                                                 \
	static int name(const void *a, const void *b)                                                  \
	{                                                                                              \
		const type *x = a, *y = b;                                                             \
		return x->k1 != y->k1 ? ktrace_cmp_u64(x->k1, y->k1) : ktrace_cmp_u64(x->k2, y->k2); \
	}

COMPARE_BY(cmp_kernel, struct tm_kernel, id, id)
static int cmp_launch(const void *a, const void *b)
{
	const struct tm_launch *x = a, *y = b;

	if (x->seq != y->seq)
		return ktrace_cmp_u64(x->seq, y->seq);
	return ktrace_cmp_u64(ktrace_tm_rec_seq(x), ktrace_tm_rec_seq(y));
}
COMPARE_BY(cmp_op, struct tm_op, seq, seq)
COMPARE_BY(cmp_order, struct tm_order, seq_before, rec_seq)
COMPARE_BY(cmp_gputime, struct tm_gputime, op_seq, rec_seq)
COMPARE_BY(cmp_graph, struct tm_graph, exec_id, revision)
static int cmp_region(const void *a, const void *b)
{
	return ktrace_cmp_u64(ktrace_tm_region_key(a), ktrace_tm_region_key(b));
}
COMPARE_BY(cmp_mod, struct tm_module_digest, id, id)
COMPARE_BY(cmp_coll, struct tm_coll, coll_index, rec_seq)
COMPARE_BY(cmp_cut, struct ktrace_rec_cut, op_seq, param_offset)

/* The keys the model's arrays are searched by. */
static uint64_t kernel_id(const void *k)
{
	return ((const struct tm_kernel *)k)->id;
}

static uint64_t op_seq(const void *o)
{
	return ((const struct tm_op *)o)->seq;
}

static uint64_t gputime_op_seq(const void *g)
{
	return ((const struct tm_gputime *)g)->op_seq;
}

static uint64_t cut_op_seq(const void *c)
{
	return ((const struct ktrace_rec_cut *)c)->op_seq;
}

static uint64_t range_base(const void *r)
{
	return ((const struct tm_range *)r)->base;
}

static uint64_t mod_id(const void *m)
{
	return ((const struct tm_module_digest *)m)->id;
}

static struct tm_kernel *find_kernel(struct tm_kernel *k, size_t n, uint64_t id)
{
	size_t i = ktrace_lower_bound(k, n, sizeof *k, id, kernel_id);

	return i < n && k[i].id == id ? &k[i] : NULL;
}

/* ---- records ------------------------------------------------------------- */

static int fail(struct load_state *s, const char *what, uint64_t seq)
{
	snprintf(s->err, s->errlen, "%s: malformed %s record (record %llu)", s->t->path, what,
		 (unsigned long long)seq);
	return -1;
}

static int oom(struct load_state *s)
{
	snprintf(s->err, s->errlen, "%s: out of memory while loading the trace", s->t->path);
	return -1;
}

static int take_header(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct ktrace_rec_header h;
	struct tm_trace *t = s->t;
	if (ktrace_decode_header(rec, len, &h) != 0)
		return fail(s, "header", seq);
	if (t->have_header)
		return 0; /* keep the first */
	t->have_header = 1;
	t->pid = h.pid;
	t->rank = h.rank;
	t->digest_alg = h.digest_alg;
	t->start_realtime_ns = h.start_realtime_ns;
	t->start_monotonic_ns = h.start_monotonic_ns;
	t->host = arena_str(t, &h.host);
	t->cmdline = arena_str(t, &h.cmdline);
	t->version = arena_str(t, &h.ktrace_version);
	t->config = arena_str(t, &h.config);
	if (!t->host || !t->cmdline || !t->version || !t->config)
		return oom(s);
	return 0;
}

static int take_module(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct ktrace_rec_module m;
	if (ktrace_decode_module(rec, len, &m) != 0)
		return fail(s, "module", seq);
	struct tm_module_digest *o = ktrace_append(&s->mods, &s->nmods, &s->cap_m, sizeof *s->mods);
	if (!o)
		return oom(s);
	o->id = m.module_id;
	o->digest = m.image_digest;
	return 0;
}

static int take_alloc(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct ktrace_rec_alloc a;
	if (ktrace_decode_alloc(rec, len, &a) != 0)
		return fail(s, "alloc", seq);
	if (!a.size)
		return 0;
	struct tm_range *o = ktrace_append(&s->ranges, &s->nranges, &s->cap_r, sizeof *s->ranges);
	if (!o)
		return oom(s);
	o->base = a.base;
	o->size = a.size;
	o->host = a.kind == KTRACE_ALLOC_HOST;
	return 0;
}

static int take_kernel(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct ktrace_rec_kernel k;
	struct tm_trace *t = s->t;
	if (ktrace_decode_kernel(rec, len, &k) != 0)
		return fail(s, "kernel", seq);
	struct tm_kernel *o = ktrace_append(&t->kernels, &t->nkernels, &s->cap_k, sizeof *t->kernels);
	if (!o)
		return oom(s);
	*o = (struct tm_kernel){ .id = k.kernel_id, .module_id = k.module_id, .handle = k.handle,
				 .layout_source = k.layout_source, .param_bytes = k.param_bytes, .known = 1,
				 .name = arena_str(t, &k.name), .demangled = arena_str(t, &k.demangled) };
	if (!o->name || !o->demangled)
		return oom(s);
	if (k.nparams) {
		o->params = arena_alloc(t, (size_t)k.nparams * sizeof *o->params);
		if (!o->params)
			return oom(s);
		for (uint32_t i = 0; i < k.nparams; i++) {
			struct ktrace_param_desc d;
			if (ktrace_kernel_param(&k, i, &d) != 0)
				return fail(s, "kernel", seq);
			struct tm_param *p = &o->params[i];
			*p = (struct tm_param){ .ordinal = d.ordinal, .kind = d.kind, .name_source = d.name_source,
						.offset = d.offset, .size = d.size, .flags = d.flags,
						.written = d.written, .written_source = d.written_source,
						.name = arena_str(t, &d.name), .type = arena_str(t, &d.type) };
			if (!p->name || !p->type)
				return oom(s);
		}
	}
	o->nparams = k.nparams;
	return 0;
}

/* Launch l's regions, sorted, and its parameter bytes after them into the
 * piece at dst, each region's extent number 1 + the index of its value in
 * s->values (number_piece numbers them); 0, or -1 when memory runs out. */
static int fill_piece(struct load_state *s, const struct ktrace_rec_launch *l, unsigned char *dst)
{
	struct tm_region *g = (struct tm_region *)dst;

	if (ktrace_grow(&s->values, &s->cap_values, l->nregions, sizeof *s->values))
		return -1;
	if (l->param_bytes_len)
		memcpy(dst + (size_t)l->nregions * sizeof *g, l->param_bytes, l->param_bytes_len);
	for (uint32_t i = 0; i < l->nregions; i++) {
		struct ktrace_region r;

		ktrace_launch_region(l, i, &r);
		s->values[i] = (struct tm_extent){ .ptr = r.ptr, .hash_len = r.hash_len,
						   .alloc = { r.alloc_base, r.alloc_size } };
		g[i] = (struct tm_region){ .param_offset = r.param_offset, .ordinal = r.ordinal, .flags = r.flags,
					   .extent = i + 1, .pre_hash = r.pre_hash, .post_hash = r.post_hash };
	}
	if (l->nregions)
		ktrace_sort(g, l->nregions, sizeof *g, cmp_region);
	return 0;
}

/* The n regions of a piece filled by fill_piece numbered by their extents'
 * values; 0, or -1 when memory runs out. */
static int number_piece(struct load_state *s, struct tm_region *g, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		int no_mem = 0;

		g[i].extent = ktrace_intern(&s->extents, &s->values[g[i].extent - 1], &no_mem);
		if (no_mem)
			return -1;
	}
	return 0;
}

/* Launch o's regions and parameter bytes (from its record l) in one piece:
 * one rounding, not two; beside another trace, that trace's piece when it
 * holds the same up to where the buffers lie (ktrace_tm_share_piece;
 * *patched: with other pointers), else a piece of its own. */
static int take_piece(struct load_state *s, const struct ktrace_rec_launch *l, struct tm_launch *o, int *patched)
{
	size_t n = (size_t)l->nregions * sizeof *o->regions + l->param_bytes_len;
	unsigned char *piece;
	int no_mem = 0;

	*patched = 0;
	if (!s->beside.like) {
		piece = arena_alloc(s->t, n);
		if (!piece || fill_piece(s, l, piece) || number_piece(s, (struct tm_region *)piece, l->nregions))
			return oom(s);
		o->regions = (struct tm_region *)piece;
		return 0;
	}
	if (ktrace_grow(&s->scratch, &s->cap_scratch, n + 1, 1) || fill_piece(s, l, s->scratch))
		return oom(s);
	const struct tm_region *shared = ktrace_tm_share_piece(&s->beside, o->seq, (struct tm_region *)s->scratch,
							       s->values, l->nregions, s->scratch + n - l->param_bytes_len,
							       l->param_bytes_len, patched, &no_mem);
	if (no_mem)
		return oom(s);
	if (shared) {
		o->regions = (struct tm_region *)shared;
		return 0;
	}
	piece = arena_alloc(s->t, n);
	if (!piece)
		return oom(s);
	memcpy(piece, s->scratch, n);
	o->regions = (struct tm_region *)piece;
	return 0;
}

static int take_launch(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct ktrace_rec_launch l;
	struct tm_trace *t = s->t;
	if (ktrace_decode_launch(rec, len, &l) != 0)
		return fail(s, "launch", seq);
	struct tm_launch *o = ktrace_append(&t->launches, &t->nlaunches, &s->cap_l, sizeof *t->launches);
	if (!o)
		return oom(s);
	int64_t delta = (int64_t)(seq - l.launch_seq);
	int far = delta <= TM_REC_SEQ_IN_REFS || delta > INT32_MAX;
	*o = (struct tm_launch){ .seq = l.launch_seq, .rec_seq_delta = far ? TM_REC_SEQ_IN_REFS : (int32_t)delta,
				 .time_ns = s->time_ns, .flags = l.flags };
	int patched;
	if (take_piece(s, &l, o, &patched))
		return -1;
	struct tm_launch_look look = { .loading_kernel_id = l.kernel_id, .context = l.context, .stream = l.stream,
				       .tid = l.tid, .device = l.device, .result = l.result, .api = l.api,
				       .hash_skip = l.hash_skip, .shape = { .shared_mem = l.shared_mem },
				       .nregions = l.nregions, .param_bytes_len = l.param_bytes_len,
				       .params_patched = (uint32_t)patched };
	int no_look_mem = 0;
	memcpy(look.shape.grid, l.grid, sizeof look.shape.grid);
	memcpy(look.shape.block, l.block, sizeof look.shape.block);
	o->loading_look = ktrace_intern(&s->looks, &look, &no_look_mem);
	if (no_look_mem)
		return oom(s);
	if (l.flags & (KTRACE_LAUNCHF_GRAPH | KTRACE_LAUNCHF_GRAPH_ITER | KTRACE_LAUNCHF_RANGE) ||
	    l.cluster[0] | l.cluster[1] | l.cluster[2] || far) {
		struct tm_refs *refs = arena_alloc(t, sizeof *refs);
		if (!refs)
			return oom(s);
		*refs = (struct tm_refs){ .graph = l.graph, .rec_seq = seq };
		if (l.flags & KTRACE_LAUNCHF_RANGE)
			refs->range = l.range;
		memcpy(refs->cluster, l.cluster, sizeof refs->cluster);
		o->refs = refs;
	}
	return 0;
}

/* A copy or memset from its record m: the members both records have, then
 * the others given. */
#define TM_OP(m, ...)                                                                                   \
	((struct tm_op){ .seq = (m).op_seq, .dst = (m).dst, .stream = (m).stream, .context = (m).context, \
			 .flags = (m).flags, .tid = (m).tid, .result = (m).result, .graph = (m).graph,     \
			 .range = (m).range, __VA_ARGS__ })

static int take_op(struct load_state *s, uint16_t type, const void *rec, size_t len, uint64_t seq)
{
	struct tm_trace *t = s->t;
	struct tm_op o;
	if (type == KTRACE_REC_MEMCPY) {
		struct ktrace_rec_memcpy m;
		if (ktrace_decode_memcpy(rec, len, &m) != 0)
			return fail(s, "memcpy", seq);
		o = TM_OP(m, .type = TM_OP_MEMCPY, .src = m.src, .bytes = m.bytes, .src_digest = m.src_digest,
			  .dst_digest = m.dst_digest, .dst_digest_state = m.dst_digest_state, .dir = m.dir);
	} else {
		struct ktrace_rec_memset m;
		if (ktrace_decode_memset(rec, len, &m) != 0)
			return fail(s, "memset", seq);
		o = TM_OP(m, .type = TM_OP_MEMSET, .elem_size = m.elem_size, .value = m.value,
			  .bytes = m.count * (uint64_t)(m.elem_size ? m.elem_size : 1));
		if (m.elem_size && o.bytes / m.elem_size != m.count)
			o.bytes = UINT64_MAX; /* absurd count: covers everything */
	}
	o.time_ns = s->time_ns;
	if (!(o.flags & KTRACE_COPYF_RANGE))
		o.range = (struct ktrace_range_ref){ 0 };
	if (ktrace_grow(&t->ops, &s->cap_o, t->nops + 1, sizeof *t->ops))
		return oom(s);
	t->ops[t->nops++] = o;
	return 0;
}

static int take_order(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct tm_trace *t = s->t;
	struct ktrace_rec_order r;
	if (ktrace_decode_order(rec, len, &r) != 0)
		return fail(s, "order", seq);
	struct tm_order *o = ktrace_append(&t->orders, &t->norders, &s->cap_ord, sizeof *t->orders);
	if (!o)
		return oom(s);
	*o = (struct tm_order){ .seq_before = r.launch_seq_before, .rec_seq = seq, .time_ns = s->time_ns, .op = r.op,
				.tid = r.tid, .stream = r.stream, .event = r.event, .context = r.context,
				.device = r.device, .stream_flags = r.stream_flags, .priority = r.priority };
	return 0;
}

static int take_gputime(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct tm_trace *t = s->t;
	struct ktrace_rec_gputime r;
	if (ktrace_decode_gputime(rec, len, &r) != 0)
		return fail(s, "gputime", seq);
	if (ktrace_grow(&t->gputimes, &s->cap_gt, t->ngputimes + 1, sizeof *t->gputimes))
		return oom(s);
	t->gputimes[t->ngputimes++] = (struct tm_gputime){
		.op_seq = r.op_seq, .rec_seq = seq, .context = r.context, .stream = r.stream,
		.start_ns = r.start_ns, .end_ns = r.end_ns < r.start_ns ? r.start_ns : r.end_ns, .ref_ns = r.ref_ns,
		.ref_err_ns = r.ref_err_ns, .flags = r.flags, .tid = r.tid, .device = r.device,
	};
	return 0;
}

static int take_cut(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct tm_trace *t = s->t;
	struct ktrace_rec_cut c;
	if (ktrace_decode_cut(rec, len, &c) != 0)
		return fail(s, "cut", seq);
	if (ktrace_grow(&t->cuts, &s->cap_cut, t->ncuts + 1, sizeof *t->cuts))
		return oom(s);
	t->cuts[t->ncuts++] = c;
	return 0;
}

static int take_note(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct tm_trace *t = s->t;
	struct ktrace_rec_note n;
	if (ktrace_decode_note(rec, len, &n) != 0)
		return fail(s, "note", seq);
	struct tm_note *o = ktrace_append(&t->notes, &t->nnotes, &s->cap_n, sizeof *t->notes);
	if (!o)
		return oom(s);
	o->rec_seq = seq;
	o->time_ns = s->time_ns;
	o->level = n.level;
	o->code = n.code;
	o->text = arena_str(t, &n.text);
	return o->text ? 0 : oom(s);
}

static int take_range(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct ktrace_rec_range r;

	if (ktrace_decode_range(rec, len, &r) != 0)
		return fail(s, "range", seq);
	return ktrace_ranges_add(&s->t->ranges, &r) ? oom(s) : 0;
}

static int take_pystack(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct tm_trace *t = s->t;
	struct ktrace_rec_pystack r;
	struct ktrace_py_frame f;
	uint32_t off = 0;

	if (ktrace_decode_pystack(rec, len, &r) != 0)
		return fail(s, "pystack", seq);
	struct tm_pystack *o = ktrace_append(&t->pystacks, &t->npystacks, &s->cap_py, sizeof *t->pystacks);
	if (!o)
		return oom(s);
	*o = (struct tm_pystack){ r.launch_seq, r.fw_seq, r.tid, r.kind, r.nframes, NULL };
	o->frames = r.nframes ? arena_alloc(t, (size_t)r.nframes * sizeof *o->frames) : NULL;
	if (r.nframes && !o->frames)
		return oom(s);
	for (uint32_t i = 0; i < r.nframes && !ktrace_pystack_frame_next(&r, &off, &f); i++) {
		o->frames[i].line = f.line;
		o->frames[i].file = arena_str(t, &f.file);
		o->frames[i].function = arena_str(t, &f.function);
		if (!o->frames[i].file || !o->frames[i].function)
			return oom(s);
	}
	return 0;
}

static int take_replay(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct tm_trace *t = s->t;
	struct ktrace_rec_replay r;
	if (ktrace_decode_replay(rec, len, &r) != 0)
		return fail(s, "replay", seq);
	struct tm_replay *o = ktrace_append(&t->replays, &t->nreplays, &s->cap_p, sizeof *t->replays);
	if (!o)
		return oom(s);
	o->launch_seq = r.launch_seq;
	o->kernel_id = r.kernel_id;
	o->blob_len = r.blob_len;
	o->blob = arena_dup(t, r.blob, r.blob_len);
	return o->blob ? 0 : oom(s);
}

/* The graph of (exec, revision), made from the first part seen. */
static struct tm_graph *graph_for(struct load_state *s, const struct ktrace_rec_graph *g)
{
	struct tm_trace *t = s->t;
	struct tm_graph *o;

	for (size_t i = 0; i < t->ngraphs; i++)
		if (t->graphs[i].exec_id == g->exec_id && t->graphs[i].revision == g->revision)
			return &t->graphs[i];
	o = ktrace_append(&t->graphs, &t->ngraphs, &s->cap_g, sizeof *t->graphs);
	if (!o)
		return NULL;
	*o = (struct tm_graph){ .exec_id = g->exec_id, .graph_id = g->graph_id, .revision = g->revision,
				.cause = g->cause, .flags = g->flags, .untraced = g->untraced, .nnodes = g->nodes_total,
				.nedges = g->edges_total };
	o->kind = arena_alloc(t, (size_t)o->nnodes * sizeof *o->kind + 1);
	o->node_flags = arena_alloc(t, (size_t)o->nnodes * sizeof *o->node_flags + 1);
	o->parent = arena_alloc(t, (size_t)o->nnodes * sizeof *o->parent + 1);
	o->edges = arena_alloc(t, (size_t)o->nedges * sizeof *o->edges + 1);
	return o->kind && o->node_flags && o->parent && o->edges ? o : NULL;
}

static int take_graph(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct ktrace_rec_graph g;
	struct tm_graph *o;
	uint32_t off = 0;

	if (ktrace_decode_graph(rec, len, &g) != 0 || g.nodes_total > KTRACE_GRAPH_READ_MAX_NODES ||
	    g.edges_total > KTRACE_GRAPH_READ_MAX_EDGES || g.node_first > g.nodes_total ||
	    g.nnodes > g.nodes_total - g.node_first || g.edge_first > g.edges_total ||
	    g.nedges > g.edges_total - g.edge_first)
		return fail(s, "graph", seq);
	if (!(o = graph_for(s, &g)))
		return oom(s);
	if (o->nnodes != g.nodes_total || o->nedges != g.edges_total)
		return fail(s, "graph", seq); /* parts that disagree */
	for (uint32_t i = 0; i < g.nnodes; i++) {
		struct ktrace_graph_node n;
		if (ktrace_graph_node_next(&g, &off, &n) != 0)
			return fail(s, "graph", seq);
		o->kind[g.node_first + i] = n.kind;
		o->node_flags[g.node_first + i] = n.flags;
		o->parent[g.node_first + i] = n.parent;
	}
	for (uint32_t i = 0; i < g.nedges; i++) {
		ktrace_graph_edge_get(&g, i, &o->edges[g.edge_first + i]);
		if (o->edges[g.edge_first + i].from >= o->nnodes || o->edges[g.edge_first + i].to >= o->nnodes)
			return fail(s, "graph", seq);
	}
	o->nodes_seen += g.nnodes;
	o->edges_seen += g.nedges;
	return 0;
}

static int take_counters(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct ktrace_rec_counters c;
	if (ktrace_decode_counters(rec, len, &c) != 0)
		return fail(s, "counters", seq);
	for (uint32_t i = 0; i < c.ncounters; i++) {
		struct ktrace_counter v;
		ktrace_counters_get(&c, i, &v);
		if (v.id < sizeof s->t->counters / sizeof s->t->counters[0])
			s->t->counters[v.id] = v.value; /* cumulative: the latest wins */
	}
	return 0;
}

static int take_job(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct tm_trace *t = s->t;
	struct ktrace_rec_job j;

	if (ktrace_decode_job(rec, len, &j) != 0)
		return fail(s, "job", seq);
	if (t->have_job)
		return 0; /* keep the first */
	t->have_job = 1;
	t->job = (struct tm_job){ j.rank, j.world_size, j.local_rank, j.local_world_size, j.node_rank,
				  arena_str(t, &j.launcher), arena_str(t, &j.job_id), arena_str(t, &j.coordinator) };
	return t->job.launcher && t->job.job_id && t->job.coordinator ? 0 : oom(s);
}

static int take_coll(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct tm_trace *t = s->t;
	struct ktrace_rec_coll c;

	if (ktrace_decode_coll(rec, len, &c) != 0)
		return fail(s, "coll", seq);
	struct tm_coll *o = ktrace_append(&t->colls, &t->ncolls, &s->cap_coll, sizeof *t->colls);
	if (!o)
		return oom(s);
	*o = (struct tm_coll){
		.coll_index = c.coll_index, .rec_seq = seq, .comm = c.comm, .comm_id = c.comm_id,
		.comm_seq = c.comm_seq, .count = c.count, .sendbuff = c.sendbuff, .recvbuff = c.recvbuff,
		.stream = c.stream, .first_launch = c.first_launch, .last_launch = c.last_launch, .op = c.op,
		.datatype = c.datatype, .redop = c.redop, .group = c.group, .launch_count = c.launch_count,
		.tid = c.tid, .peer = c.peer, .comm_rank = c.comm_rank, .comm_nranks = c.comm_nranks,
		.result = c.result,
	};
	return 0;
}

static int take_comm(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct tm_trace *t = s->t;
	struct ktrace_rec_comm c;

	if (ktrace_decode_comm(rec, len, &c) != 0)
		return fail(s, "comm", seq);
	struct tm_comm *o = ktrace_append(&t->comms, &t->ncomms, &s->cap_comm, sizeof *t->comms);
	if (!o)
		return oom(s);
	*o = (struct tm_comm){
		.comm = c.comm, .comm_id = c.comm_id, .parent_id = c.parent_id, .rec_seq = seq, .event = c.event,
		.tid = c.tid, .rank = c.rank, .nranks = c.nranks, .device = c.device, .color = c.color, .key = c.key,
		.result = c.result, .version = arena_str(t, &c.version), .settings = arena_str(t, &c.settings),
	};
	return o->version && o->settings ? 0 : oom(s);
}

static int take_end(struct load_state *s, const void *rec, size_t len, uint64_t seq)
{
	struct ktrace_rec_end e;
	if (ktrace_decode_end(rec, len, &e) != 0)
		return fail(s, "end", seq);
	s->t->have_end = 1;
	s->t->end_reason = e.reason;
	s->t->end_status = e.status;
	return 0;
}

static int take_record(struct load_state *s, const void *rec, size_t len)
{
	struct ktrace_record_prefix p;
	if (ktrace_decode_prefix(rec, len, &p) != 0) {
		snprintf(s->err, s->errlen, "%s: malformed record prefix (record %zu of the file)",
			 s->t->path, s->t->nrecords);
		return -1;
	}
	s->t->nrecords++;
	s->time_ns = p.time_ns;
	switch (p.type) {
	case KTRACE_REC_HEADER: return take_header(s, rec, len, p.seq);
	case KTRACE_REC_MODULE: return take_module(s, rec, len, p.seq);
	case KTRACE_REC_KERNEL: return take_kernel(s, rec, len, p.seq);
	case KTRACE_REC_ALLOC: return take_alloc(s, rec, len, p.seq);
	case KTRACE_REC_LAUNCH: return take_launch(s, rec, len, p.seq);
	case KTRACE_REC_MEMCPY:
	case KTRACE_REC_MEMSET: return take_op(s, p.type, rec, len, p.seq);
	case KTRACE_REC_NOTE: return take_note(s, rec, len, p.seq);
	case KTRACE_REC_ORDER: return take_order(s, rec, len, p.seq);
	case KTRACE_REC_COUNTERS: return take_counters(s, rec, len, p.seq);
	case KTRACE_REC_END: return take_end(s, rec, len, p.seq);
	case KTRACE_REC_REPLAY: return take_replay(s, rec, len, p.seq);
	case KTRACE_REC_GRAPH: return take_graph(s, rec, len, p.seq);
	case KTRACE_REC_RANGE: return take_range(s, rec, len, p.seq);
	case KTRACE_REC_PYSTACK: return take_pystack(s, rec, len, p.seq);
	case KTRACE_REC_GPUTIME: return take_gputime(s, rec, len, p.seq);
	case KTRACE_REC_CUT: return take_cut(s, rec, len, p.seq);
	case KTRACE_REC_JOB: return take_job(s, rec, len, p.seq);
	case KTRACE_REC_COLL: return take_coll(s, rec, len, p.seq);
	case KTRACE_REC_COMM: return take_comm(s, rec, len, p.seq);
	default: return 0; /* records the diff does not need, and unknown types */
	}
}

struct kidx {
	uint64_t id;
	size_t idx;
};

COMPARE_BY(cmp_kidx, struct kidx, id, idx)

static int cmp_u64(const void *a, const void *b)
{
	return ktrace_cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

/* Kernels sorted by id, one per id: a later record of an id replaces the
 * earlier one (metadata may be refined). */
static int dedup_kernels(struct load_state *s)
{
	struct tm_trace *t = s->t;
	size_t n = t->nkernels;
	if (n < 2)
		return 0;
	struct kidx *ord = malloc(n * sizeof *ord);
	struct tm_kernel *sorted = malloc(n * sizeof *sorted);
	if (!ord || !sorted) {
		free(ord);
		free(sorted);
		return oom(s);
	}
	for (size_t i = 0; i < n; i++) {
		ord[i].id = t->kernels[i].id;
		ord[i].idx = i;
	}
	ktrace_sort(ord, n, sizeof *ord, cmp_kidx);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tm_kernel *src = &t->kernels[ord[i].idx];
		if (m && sorted[m - 1].id == src->id)
			sorted[m - 1] = *src;
		else
			sorted[m++] = *src;
	}
	free(ord);
	free(t->kernels);
	t->kernels = sorted;
	t->nkernels = m;
	s->cap_k = n;
	return 0;
}

/* A look of all zeros (kernel id 0 and the rest zero: ktrace_intern numbers
 * it 0) for the launches that have it, as the last of t->looks. */
static int add_zero_look(struct load_state *s)
{
	struct tm_trace *t = s->t;
	size_t i = 0;

	while (i < t->nlaunches && t->launches[i].loading_look)
		i++;
	if (i == t->nlaunches)
		return 0;
	if (t->nlooks >= UINT32_MAX - 1 || ktrace_grow(&t->looks, &s->looks.cap_items, t->nlooks + 1, sizeof *t->looks))
		return oom(s);
	memset(&t->looks[t->nlooks++], 0, sizeof *t->looks);
	for (; i < t->nlaunches; i++)
		if (!t->launches[i].loading_look)
			t->launches[i].loading_look = (uint32_t)t->nlooks;
	return 0;
}

/* Placeholders for kernels that launches reference but no record describes. */
static int add_placeholders(struct load_state *s)
{
	struct tm_trace *t = s->t;
	uint64_t *ids = NULL;
	size_t nids = 0, cap = 0;
	for (size_t i = 0; i < t->nlooks; i++) {
		uint64_t id = t->looks[i].loading_kernel_id;
		if (find_kernel(t->kernels, t->nkernels, id))
			continue;
		if (ktrace_grow(&ids, &cap, nids + 1, sizeof *ids)) {
			free(ids);
			return oom(s);
		}
		ids[nids++] = id;
	}
	if (!nids)
		return 0;
	ktrace_sort(ids, nids, sizeof *ids, cmp_u64);
	if (ktrace_grow(&t->kernels, &s->cap_k, t->nkernels + nids, sizeof *t->kernels)) {
		free(ids);
		return oom(s);
	}
	for (size_t i = 0; i < nids; i++) {
		if (i && ids[i] == ids[i - 1])
			continue;
		struct tm_kernel *k = &t->kernels[t->nkernels++];
		memset(k, 0, sizeof *k);
		k->id = ids[i];
		k->name = "";
		char label[64];
		int n = snprintf(label, sizeof label, "kernel#%llu (no KERNEL record)", (unsigned long long)ids[i]);
		struct ktrace_str ls = { label, (uint16_t)n };
		k->demangled = arena_str(t, &ls);
		if (!k->demangled) {
			free(ids);
			return oom(s);
		}
	}
	free(ids);
	ktrace_sort(t->kernels, t->nkernels, sizeof *t->kernels, cmp_kernel);
	return 0;
}

COMPARE_BY(cmp_range, struct tm_range, base, base)

enum { MEM_UNTRACKED = 0, MEM_DEVICE = 1, MEM_PINNED_HOST = 2 };

/* Where addr lies by the ALLOC records (the last allocation starting at or
 * below addr): device memory, pinned (or registered) host memory, or in no
 * tracked allocation (pageable host memory, or untracked). */
static int memory_at(const struct load_state *s, uint64_t addr)
{
	size_t lo = ktrace_upper_bound(s->ranges, s->nranges, sizeof *s->ranges, addr, range_base);

	for (size_t i = lo; i-- > 0;) {
		const struct tm_range *r = &s->ranges[i];
		if (addr - r->base < r->size)
			return r->host ? MEM_PINNED_HOST : MEM_DEVICE;
		if (lo - i > 64)
			break; /* ranges below are far away: do not scan them all */
	}
	return MEM_UNTRACKED;
}

static int on_device(const struct load_state *s, uint64_t addr)
{
	return memory_at(s, addr) == MEM_DEVICE;
}

/* The host memory a copy or memset touches is pinned: a memset's target, a
 * copy's host side (by its direction, recorded or inferred). */
static void mark_pinned_host(struct load_state *s)
{
	struct tm_trace *t = s->t;
	for (size_t i = 0; i < t->nops; i++) {
		struct tm_op *o = &t->ops[i];
		uint64_t host = o->type == TM_OP_MEMSET ? o->dst
			: o->dir == KTRACE_COPY_HTOD ? o->src : o->dir == KTRACE_COPY_DTOH ? o->dst : 0;
		o->host_pinned = host && s->nranges && memory_at(s, host) == MEM_PINNED_HOST;
	}
}

/* cuMemcpy / cuMemcpyAsync record no direction: take it from where the
 * source and destination lie. */
static void infer_copy_dirs(struct load_state *s)
{
	struct tm_trace *t = s->t;
	ktrace_sort(s->ranges, s->nranges, sizeof *s->ranges, cmp_range);
	for (size_t i = 0; i < t->nops; i++) {
		struct tm_op *o = &t->ops[i];
		if (o->type != TM_OP_MEMCPY || o->dir != KTRACE_COPY_UNKNOWN || !s->nranges)
			continue;
		int d = on_device(s, o->dst), sr = on_device(s, o->src);
		o->dir = sr ? (d ? KTRACE_COPY_DTOD : KTRACE_COPY_DTOH) : (d ? KTRACE_COPY_HTOD : KTRACE_COPY_HTOH);
		o->dir_inferred = 1;
	}
}

/* Sort everything, resolve modules and kernels. */
static int finish(struct load_state *s)
{
	struct tm_trace *t = s->t;
	if (dedup_kernels(s) || add_zero_look(s) || add_placeholders(s))
		return -1;
	ktrace_sort(s->mods, s->nmods, sizeof *s->mods, cmp_mod);
	for (size_t i = 0; i < t->nkernels; i++) {
		struct tm_kernel *k = &t->kernels[i];
		size_t lo = ktrace_upper_bound(s->mods, s->nmods, sizeof *s->mods, k->module_id, mod_id);
		/* lo - 1 is the last MODULE record of that id, if any */
		k->module_digest = k->module_id && lo > 0 && s->mods[lo - 1].id == k->module_id
			? s->mods[lo - 1].digest : 0;
	}
	ktrace_sort(t->launches, t->nlaunches, sizeof *t->launches, cmp_launch);
	for (size_t i = 0; i < t->nlooks; i++)
		t->looks[i].kernel = find_kernel(t->kernels, t->nkernels, t->looks[i].loading_kernel_id);
	for (size_t i = 0; i < t->nlaunches; i++) /* each is 1 + its index (add_zero_look) */
		t->launches[i].look = &t->looks[t->launches[i].loading_look - 1];
	ktrace_sort(t->ops, t->nops, sizeof *t->ops, cmp_op);
	ktrace_sort(t->orders, t->norders, sizeof *t->orders, cmp_order);
	ktrace_sort(t->graphs, t->ngraphs, sizeof *t->graphs, cmp_graph);
	ktrace_sort(t->gputimes, t->ngputimes, sizeof *t->gputimes, cmp_gputime);
	ktrace_sort(t->cuts, t->ncuts, sizeof *t->cuts, cmp_cut);
	ktrace_sort(t->colls, t->ncolls, sizeof *t->colls, cmp_coll);
	infer_copy_dirs(s);
	mark_pinned_host(s);
	return 0;
}

/* Beside like: its extents numbered first, in its order, so that a region
 * equal to one of like's holds the same number, and its numbers can be
 * claimed (ktrace_tm_share_piece).  0, or -1 (out of memory). */
static int number_like(struct load_state *s)
{
	const struct tm_trace *like = s->beside.like;
	int no_mem = 0;

	if (!like)
		return 0;
	s->beside.t = s->t;
	s->beside.extents = &s->extents;
	s->beside.claimed = calloc(like->nextents + 1, 1);
	if (!s->beside.claimed)
		return oom(s);
	for (size_t i = 0; i < like->nextents && !no_mem; i++)
		ktrace_intern(&s->extents, &like->extents[i], &no_mem);
	return no_mem ? oom(s) : 0;
}

static int load_reader(struct tm_trace *t, struct ktrace_reader *r, const char *name, const struct tm_trace *like,
		       int allow_truncated, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	t->path = name;
	struct load_state s;
	memset(&s, 0, sizeof s);
	s.t = t;
	s.extents = (struct tm_intern){ .items = &t->extents, .nitems = &t->nextents, .size = sizeof *t->extents };
	s.looks = (struct tm_intern){ .items = &t->looks, .nitems = &t->nlooks, .size = sizeof *t->looks };
	s.beside.like = like;
	s.err = err;
	s.errlen = errlen;
	int rc = number_like(&s);
	t->format_minor = ktrace_reader_minor(r);
	for (; !rc;) {
		const void *rec;
		size_t len;
		enum ktrace_read_status st = ktrace_reader_next(r, &rec, &len);
		if (st == KTRACE_READ_RECORD) {
			if (take_record(&s, rec, len) != 0) {
				rc = -1;
				break;
			}
			continue;
		}
		if (st == KTRACE_READ_EOF)
			break;
		if (st == KTRACE_READ_TRUNCATED && allow_truncated) {
			t->truncated = 1;
			snprintf(t->truncated_msg, sizeof t->truncated_msg, "%s", ktrace_reader_error(r));
			break;
		}
		const char *m = ktrace_reader_error(r);
		if (m && *m)
			snprintf(err, errlen, "%s", m);
		else
			snprintf(err, errlen, "%s: %s", t->path,
				 st == KTRACE_READ_TRUNCATED ? "truncated trace" :
				 st == KTRACE_READ_CORRUPT ? "corrupt trace" : "read error");
		rc = -1;
		break;
	}
	ktrace_reader_close(r);
	if (rc == 0 && !t->have_header) {
		snprintf(err, errlen, "%s: no header record (not a complete ktrace trace)", t->path);
		rc = -1;
	}
	if (rc == 0)
		rc = finish(&s);
	free(s.mods);
	free(s.ranges);
	free(s.scratch);
	free(s.values);
	free(s.beside.claimed);
	free(s.beside.params);
	ktrace_intern_free(&s.extents);
	ktrace_intern_free(&s.looks);
	if (rc != 0)
		ktrace_tm_free(t);
	return rc;
}

int ktrace_tm_load_reader(struct tm_trace *t, struct ktrace_reader *r, const char *name, int allow_truncated, char *err,
			  size_t errlen)
{
	return load_reader(t, r, name, NULL, allow_truncated, err, errlen);
}

int ktrace_tm_load_beside(struct tm_trace *t, const char *path, const struct tm_trace *like, int allow_truncated,
			  char *err, size_t errlen)
{
	struct ktrace_reader *r = ktrace_reader_open(path, err, errlen);

	if (!r) {
		memset(t, 0, sizeof *t);
		t->path = path;
		return -1;
	}
	return load_reader(t, r, path, like, allow_truncated, err, errlen);
}

int ktrace_tm_load(struct tm_trace *t, const char *path, int allow_truncated, char *err, size_t errlen)
{
	return ktrace_tm_load_beside(t, path, NULL, allow_truncated, err, errlen);
}

void ktrace_tm_free(struct tm_trace *t)
{
	if (t->borrowed) { /* the memory is the other trace's */
		const char *path = t->path;
		memset(t, 0, sizeof *t);
		t->path = path;
		return;
	}
	struct tm_arena_block *b = t->arena;
	while (b) {
		struct tm_arena_block *n = b->next;
		free(b);
		b = n;
	}
	free(t->kernels);
	free(t->extents);
	free(t->looks);
	free(t->launches);
	free(t->ops);
	free(t->notes);
	free(t->orders);
	free(t->replays);
	free(t->graphs);
	free(t->pystacks);
	ktrace_ranges_free(&t->ranges);
	free(t->gputimes);
	free(t->cuts);
	free(t->colls);
	free(t->comms);
	const char *path = t->path;
	memset(t, 0, sizeof *t);
	t->path = path;
}

const char *ktrace_tm_kernel_name(const struct tm_kernel *k)
{
	if (k->demangled && *k->demangled)
		return k->demangled;
	if (k->name && *k->name)
		return k->name;
	return "(unnamed kernel)"; /* a KERNEL record with an empty name */
}

int32_t ktrace_tm_rank(const struct tm_trace *t)
{
	return t->have_job && t->job.rank >= 0 ? t->job.rank : (int32_t)t->rank;
}

uint64_t ktrace_tm_occurrence(const struct tm_trace *t, const struct tm_launch *l)
{
	const char *name = l->look->kernel->name;
	uint64_t n = 0;

	for (const struct tm_launch *p = t->launches; p < l && p < t->launches + t->nlaunches; p++)
		if (p->look->kernel == l->look->kernel || (name[0] && !strcmp(p->look->kernel->name, name)))
			n++;
	return n;
}

const struct tm_param *ktrace_tm_param_at(const struct tm_kernel *k, uint32_t off)
{
	for (uint32_t i = 0; i < k->nparams; i++) {
		const struct tm_param *p = &k->params[i];
		if (off >= p->offset && off - p->offset < (p->size ? p->size : 1))
			return p;
	}
	return NULL;
}

const struct tm_graph *ktrace_tm_graph(const struct tm_trace *t, uint64_t exec_id, uint32_t revision)
{
	size_t lo = 0, hi = t->ngraphs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tm_graph *g = &t->graphs[mid];
		if (g->exec_id < exec_id || (g->exec_id == exec_id && g->revision < revision))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->ngraphs && t->graphs[lo].exec_id == exec_id && t->graphs[lo].revision == revision
		       ? &t->graphs[lo] : NULL;
}

const struct ktrace_rec_cut *ktrace_tm_cut(const struct tm_trace *t, uint64_t op_seq, uint32_t param_offset)
{
	for (size_t i = ktrace_lower_bound(t->cuts, t->ncuts, sizeof *t->cuts, op_seq, cut_op_seq);
	     i < t->ncuts && t->cuts[i].op_seq == op_seq; i++)
		if (t->cuts[i].param_offset == param_offset)
			return &t->cuts[i];
	return NULL;
}

const struct tm_gputime *ktrace_tm_gputime(const struct tm_trace *t, uint64_t seq)
{
	size_t i = ktrace_lower_bound(t->gputimes, t->ngputimes, sizeof *t->gputimes, seq, gputime_op_seq);

	return i < t->ngputimes && t->gputimes[i].op_seq == seq ? &t->gputimes[i] : NULL;
}

size_t ktrace_tm_op_lower_bound(const struct tm_trace *t, uint64_t seq)
{
	return ktrace_lower_bound(t->ops, t->nops, sizeof *t->ops, seq, op_seq);
}

/* What one record tells ktrace_tm_scan_run. */
static void scan_record(const void *rec, size_t len, struct tm_run_scan *out)
{
	struct ktrace_record_prefix p;

	if (ktrace_decode_prefix(rec, len, &p) != 0)
		return;
	if (p.type == KTRACE_REC_LAUNCH) {
		out->launches++;
	} else if (p.type == KTRACE_REC_HEADER) {
		struct ktrace_rec_header h;
		if (ktrace_decode_header(rec, len, &h) == 0 && !out->have_header) {
			out->have_header = 1;
			if (!out->have_job)
				out->rank = h.rank;
		}
	} else if (p.type == KTRACE_REC_JOB && !out->have_job) {
		struct ktrace_rec_job j;
		if (ktrace_decode_job(rec, len, &j) == 0) {
			out->have_job = 1;
			out->world_size = j.world_size;
			if (j.rank >= 0)
				out->rank = (uint32_t)j.rank;
		}
	} else if (p.type == KTRACE_REC_GRAPH) {
		struct ktrace_rec_graph g;
		out->graphs++;
		if (ktrace_decode_graph(rec, len, &g) == 0 && g.untraced == KTRACE_GRAPH_UNTRACED_MEMORY_NODES)
			out->graphs_memory_nodes++;
	}
}

int ktrace_tm_scan_run(const char *path, struct tm_run_scan *out, char *err, size_t errlen)
{
	struct ktrace_reader *r = ktrace_reader_open(path, err, errlen);
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->world_size = -1;
	if (!r)
		return -1;
	for (;;) {
		const void *rec;
		size_t len;
		enum ktrace_read_status st = ktrace_reader_next(r, &rec, &len);
		if (st == KTRACE_READ_EOF)
			break;
		if (st != KTRACE_READ_RECORD) {
			out->truncated = st == KTRACE_READ_TRUNCATED;
			snprintf(err, errlen, "%s", ktrace_reader_error(r));
			if (!*err)
				snprintf(err, errlen, "%s: unreadable trace", path);
			rc = -1;
			break;
		}
		scan_record(rec, len, out);
	}
	ktrace_reader_close(r);
	return rc;
}

