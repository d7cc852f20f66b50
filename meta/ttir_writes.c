/* meta/ttir_writes.c: which arguments a Triton kernel can write through, from
 * its TTIR (the `.ttir` beside its cubin in the Triton cache; TTIR argument i
 * is cubin parameter i), by the data flow of meta/write_flow.h.
 *
 * The kernel's `tt.func` is read line by line (MLIR prints one operation a
 * line; a region opens at a line's trailing '{' and closes at a leading '}'):
 *   every argument is seeded with its own index;
 *   tt.load, tt.descriptor_load/gather: results from memory (MEM when a
 *     pointer is loaded, `!tt.ptr<!tt.ptr<...>>`);
 *   tt.store, tt.atomic_rmw, tt.atomic_cas, tt.descriptor_store/reduce/
 *     scatter: the first operand (pointer or descriptor) is written, the
 *     others are stored as data;
 *   tt.int_to_ptr: a pointer that may point anywhere (MEM);
 *   scf.for: iter_args, yields and results by position; scf.if: yields to
 *     results by position; other regions (scf.while, tt.reduce, tt.scan,
 *     execute_region) and cf branches pool every operand, terminator operand,
 *     block argument and result;
 *   the pure operations listed below: results from every operand;
 *   tt.call, impure inline asm or extern calls (inline asm with a [memory]
 *     operand or a call counts as impure), any operation not listed,
 *   an argument neither a pointer nor a scalar (a tensor descriptor changes
 *   the cubin's layout): nothing proven.
 * Pointer arithmetic (tt.addptr, tt.advance) is taken to stay inside the
 * buffer of its base, as Triton's semantics say.
 *
 * Owns kt_ttir_writes.  Calls write_flow.c.
 */
#include "meta/write_flow.h"

#include <stdio.h>
#include <stdlib.h>

#define KT_TTIR_MAX_DEPTH 64
#define KT_TTIR_MAX_RESULTS 256

enum frame_kind { FRAME_FUNC, FRAME_FOR, FRAME_IF, FRAME_POOL };

/* An open region: its operation's results and loop-carried arguments. */
struct frame {
	enum frame_kind kind;
	uint32_t pool;      /* the value pooling what flows through the region */
	uint32_t nresults, niter;
	uint32_t *results;  /* malloc'd */
	uint32_t *iter;     /* scf.for's iter_args, malloc'd */
};

struct ttir_reader {
	struct kt_flow *f;
	struct frame frames[KT_TTIR_MAX_DEPTH];
	int depth;
	char **owned;       /* generated value names ("%r#1"), freed at the end */
	size_t nowned, owned_cap;
	uint32_t npools;
};

/* Operations whose results come from their operands and that write nothing. */
static const char *const pure_ops[] = {
	"tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.make_range", "tt.get_program_id",
	"tt.get_num_programs", "tt.addptr", "tt.make_tensor_ptr", "tt.advance", "tt.trans", "tt.join",
	"tt.split", "tt.cat", "tt.dot", "tt.dot_scaled", "tt.histogram", "tt.gather", "tt.fp_to_fp",
	"tt.bitcast", "tt.ptr_to_int", "tt.clampf", "tt.precise_sqrt", "tt.precise_divf", "tt.mulhiui",
	"tt.make_tensor_descriptor", "tt.unsplat", "tt.assume", NULL,
};
/* Operations holding regions whose values pool (FRAME_POOL). */
static const char *const pool_ops[] = {
	"tt.reduce", "tt.scan", "tt.map_elementwise", "scf.while", "scf.execute_region", NULL,
};
static const char *const load_ops[] = {
	"tt.load", "tt.descriptor_load", "tt.descriptor_gather", NULL,
};
static const char *const store_ops[] = {
	"tt.store", "tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_store", "tt.descriptor_reduce",
	"tt.descriptor_scatter", NULL,
};
/* Operations that write nothing and make nothing: printing, checks, returns. */
static const char *const inert_ops[] = {
	"tt.print", "tt.assert", "tt.return", "gpu.barrier", "llvm.intr.assume", NULL,
};

struct span {
	const char *s, *e;
};

static int in_list(struct span op, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == (size_t)(op.e - op.s) && !memcmp(op.s, *list, (size_t)(op.e - op.s)))
			return 1;
	return 0;
}

static int starts(struct span op, const char *prefix)
{
	size_t n = strlen(prefix);
	return (size_t)(op.e - op.s) >= n && !memcmp(op.s, prefix, n);
}

static int is_ssa_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '$' || c == '.' || c == '-' || c == '#';
}

/* The next SSA name (%x, %x#1) in [*p, e) outside strings; 0 at the end. */
static int next_ssa(const char **p, const char *e, struct span *out)
{
	const char *q = *p;
	while (q < e) {
		if (*q == '"') {
			const char *z = memchr(q + 1, '"', (size_t)(e - q - 1));
			q = z ? z + 1 : e;
		} else if (*q == '%') {
			out->s = q++;
			while (q < e && is_ssa_char(*q))
				q++;
			out->e = q;
			*p = q;
			return 1;
		} else {
			q++;
		}
	}
	*p = e;
	return 0;
}

static uint32_t value(struct ttir_reader *r, struct span s)
{
	return kt_flow_value(r->f, s.s, (size_t)(s.e - s.s));
}

/* A generated name "%r#k" kept for the flow's lifetime; its value. */
static uint32_t result_value(struct ttir_reader *r, struct span base, uint32_t k)
{
	char *name = malloc((size_t)(base.e - base.s) + 16);
	if (!name || ktrace_grow(&r->owned, &r->owned_cap, r->nowned + 1, sizeof *r->owned) != 0) {
		free(name);
		r->f->oom = 1;
		return 0;
	}
	int n = snprintf(name, (size_t)(base.e - base.s) + 16, "%.*s#%u", (int)(base.e - base.s), base.s, k);
	r->owned[r->nowned++] = name;
	return kt_flow_value(r->f, name, (size_t)n);
}

/* The results "%a, %b = " or "%r:3 = " at the start of a line, their
 * values into out (at most max); returns the count (0: none) and sets *rest
 * after the '='.  -1 when too many. */
static int parse_results(struct ttir_reader *r, const char *s, const char *e, uint32_t *out, int max, const char **rest)
{
	const char *eq = s;
	while (eq < e && *eq != '=' && *eq != '"')
		eq++;
	*rest = s;
	if (*s != '%' || eq >= e || *eq != '=')
		return 0;
	int n = 0;
	const char *p = s;
	struct span v;
	while (next_ssa(&p, eq, &v)) {
		uint32_t count = 1;
		if (p < eq && *p == ':')
			count = (uint32_t)strtoul(p + 1, NULL, 10);
		if (count > (uint32_t)(max - n))
			return -1;
		for (uint32_t k = 0; k < count; k++)
			out[n++] = p < eq && *p == ':' ? result_value(r, v, k) : value(r, v);
	}
	*rest = eq + 1;
	return n;
}

/* The operation's name: a quoted "tt.reduce" or a dotted word. */
static struct span op_name(const char *s, const char *e)
{
	while (s < e && *s == ' ')
		s++;
	struct span op = {s, s};
	if (s < e && *s == '"') {
		const char *z = memchr(s + 1, '"', (size_t)(e - s - 1));
		return z ? (struct span){s + 1, z} : op;
	}
	while (op.e < e && (is_ssa_char(*op.e) && *op.e != '#'))
		op.e++;
	return op;
}

static uint32_t new_pool(struct ttir_reader *r)
{
	char name[32];
	int n = snprintf(name, sizeof name, "%%pool#%u", r->npools++);
	char *copy = kt_strndup(name, (size_t)n);
	if (!copy || ktrace_grow(&r->owned, &r->owned_cap, r->nowned + 1, sizeof *r->owned) != 0) {
		free(copy);
		r->f->oom = 1;
		return 0;
	}
	r->owned[r->nowned++] = copy;
	return kt_flow_value(r->f, copy, (size_t)n);
}

/* COPY dst <- every SSA name of [s, e). */
static void copy_operands(struct ttir_reader *r, const uint32_t *dst, int ndst, const char *s, const char *e)
{
	if (ndst <= 0)
		return;
	kt_flow_op(r->f, KT_FLOW_COPY, 0);
	for (int i = 0; i < ndst; i++)
		kt_flow_dst(r->f, dst[i]);
	struct span v;
	while (next_ssa(&s, e, &v))
		kt_flow_src(r->f, value(r, v));
}

static void copy_one(struct ttir_reader *r, uint32_t dst, uint32_t src)
{
	kt_flow_op(r->f, KT_FLOW_COPY, 0);
	kt_flow_dst(r->f, dst);
	kt_flow_src(r->f, src);
}

static void push_frame(struct ttir_reader *r, enum frame_kind kind, const uint32_t *results, int nresults,
		       const uint32_t *iter, int niter)
{
	if (r->depth == KT_TTIR_MAX_DEPTH) {
		kt_flow_opaque(r->f, "regions nested too deep");
		r->depth++; /* counted, so that the closing braces still match */
		return;
	}
	struct frame *fr = &r->frames[r->depth++];
	memset(fr, 0, sizeof *fr);
	fr->kind = kind;
	fr->pool = new_pool(r);
	fr->results = nresults > 0 ? malloc((size_t)nresults * sizeof *results) : NULL;
	fr->iter = niter > 0 ? malloc((size_t)niter * sizeof *iter) : NULL;
	if ((nresults > 0 && !fr->results) || (niter > 0 && !fr->iter)) {
		r->f->oom = 1;
		return;
	}
	fr->nresults = (uint32_t)(nresults > 0 ? nresults : 0);
	fr->niter = (uint32_t)(niter > 0 ? niter : 0);
	if (fr->nresults)
		memcpy(fr->results, results, fr->nresults * sizeof *results);
	if (fr->niter)
		memcpy(fr->iter, iter, fr->niter * sizeof *iter);
}

static void pop_frame(struct ttir_reader *r)
{
	if (r->depth <= 0)
		return;
	if (r->depth <= KT_TTIR_MAX_DEPTH) {
		free(r->frames[r->depth - 1].results);
		free(r->frames[r->depth - 1].iter);
	}
	r->depth--;
}

static struct frame *top(struct ttir_reader *r)
{
	return r->depth > 0 && r->depth <= KT_TTIR_MAX_DEPTH ? &r->frames[r->depth - 1] : NULL;
}

/* scf.for: %iv = %lb to %ub step %st iter_args(%a0 = %i0, ...): the bounds
 * give iv, each init its iter_arg and its result. */
static void open_for(struct ttir_reader *r, const uint32_t *results, int nresults, const char *s, const char *e)
{
	uint32_t tok[2 * KT_TTIR_MAX_RESULTS + 4];
	int n = 0;
	struct span v;
	while (n < (int)(sizeof tok / sizeof tok[0]) && next_ssa(&s, e, &v))
		tok[n++] = value(r, v);
	int npairs = (n - 4) / 2;
	if (n < 4 || (n - 4) % 2 || npairs != nresults) {
		kt_flow_opaque(r->f, "an scf.for not read");
		push_frame(r, FRAME_FOR, NULL, 0, NULL, 0);
		return;
	}
	kt_flow_op(r->f, KT_FLOW_COPY, 0);
	kt_flow_dst(r->f, tok[0]);
	for (int i = 1; i < 4; i++)
		kt_flow_src(r->f, tok[i]);
	uint32_t iter[KT_TTIR_MAX_RESULTS];
	for (int k = 0; k < npairs; k++) {
		iter[k] = tok[4 + 2 * k];
		copy_one(r, iter[k], tok[5 + 2 * k]);
		copy_one(r, results[k], tok[5 + 2 * k]);
	}
	push_frame(r, FRAME_FOR, results, nresults, iter, npairs);
}

/* A region whose values pool: every operand into the pool, the pool into the
 * results and into the arguments the line binds ("%a = %init"). */
static void open_pool(struct ttir_reader *r, const uint32_t *results, int nresults, const char *s, const char *e)
{
	push_frame(r, FRAME_POOL, results, nresults, NULL, 0);
	struct frame *fr = top(r);
	if (!fr)
		return;
	uint32_t pool = fr->pool;
	copy_operands(r, &pool, 1, s, e);
	struct span v;
	while (next_ssa(&s, e, &v)) {
		const char *q = v.e;
		while (q < e && *q == ' ')
			q++;
		if (q < e && *q == '=')
			copy_one(r, value(r, v), pool);
	}
	for (int i = 0; i < nresults; i++)
		copy_one(r, results[i], pool);
}

/* A region's terminator (scf.yield, scf.condition, *.return, cf branches). */
static void terminator(struct ttir_reader *r, struct span op, const char *s, const char *e)
{
	struct frame *fr = top(r);
	if (!fr)
		return;
	int yield = starts(op, "scf.yield") && op.e - op.s == 9;
	if (fr->kind == FRAME_POOL || (fr->kind == FRAME_FUNC && !yield)) {
		copy_operands(r, &fr->pool, 1, s, e);
		return;
	}
	if (!yield) {
		kt_flow_opaque(r->f, "a terminator not read");
		return;
	}
	uint32_t k = 0;
	struct span v;
	while (next_ssa(&s, e, &v)) {
		uint32_t y = value(r, v);
		if (k < fr->nresults)
			copy_one(r, fr->results[k], y);
		if (fr->kind == FRAME_FOR && k < fr->niter)
			copy_one(r, fr->iter[k], y);
		k++;
	}
	if (k != fr->nresults)
		kt_flow_opaque(r->f, "a yield not matching its results");
}

static int is_terminator(struct span op)
{
	size_t n = (size_t)(op.e - op.s);
	if (starts(op, "cf."))
		return 1;
	if (n >= 7 && !memcmp(op.e - 7, ".return", 7))
		return !(n == 9 && starts(op, "tt.return"));
	return (n >= 6 && !memcmp(op.e - 6, ".yield", 6)) || (n >= 10 && !memcmp(op.e - 10, ".condition", 10));
}

/* A store-like operation: its first operand written, the rest data; its
 * results (an atomic's old value) from memory. */
static void store_op(struct ttir_reader *r, const uint32_t *results, int nresults, const char *s, const char *e,
		     int loads_pointer)
{
	if (nresults > 0) {
		kt_flow_op(r->f, KT_FLOW_LOAD, loads_pointer);
		for (int i = 0; i < nresults; i++)
			kt_flow_dst(r->f, results[i]);
	}
	struct span v;
	if (!next_ssa(&s, e, &v)) {
		kt_flow_opaque(r->f, "a store without operands");
		return;
	}
	kt_flow_op(r->f, KT_FLOW_STORE, 0);
	kt_flow_addr(r->f, value(r, v));
	while (next_ssa(&s, e, &v))
		kt_flow_src(r->f, value(r, v));
}

/* One operation with its results; the line ends with '{' when it opens a region. */
static void operation(struct ttir_reader *r, struct span op, const uint32_t *res, int nres, const char *s,
		      const char *e, int opens)
{
	int loads_pointer = memmem(s, (size_t)(e - s), "ptr<!tt.ptr", 11) != NULL;
	int pure_call = memmem(s, (size_t)(e - s), "pure = true", 11) != NULL;
	if (starts(op, "tt.elementwise_inline_asm") && (memchr(s, '[', (size_t)(e - s)) || memmem(s, (size_t)(e - s), "call", 4)))
		pure_call = 0; /* asm with a memory operand or a call: declared pure or not */
	if (opens && starts(op, "scf.for") && op.e - op.s == 7) {
		open_for(r, res, nres, s, e);
	} else if (opens && starts(op, "scf.if") && op.e - op.s == 6) {
		push_frame(r, FRAME_IF, res, nres, NULL, 0);
	} else if (opens) {
		if (!in_list(op, pool_ops))
			kt_flow_opaque(r->f, "a region operation not recognised");
		open_pool(r, res, nres, s, e);
	} else if (is_terminator(op)) {
		terminator(r, op, s, e);
	} else if (in_list(op, store_ops)) {
		store_op(r, res, nres, s, e, loads_pointer);
	} else if (in_list(op, load_ops)) {
		kt_flow_op(r->f, KT_FLOW_LOAD, loads_pointer);
		for (int i = 0; i < nres; i++)
			kt_flow_dst(r->f, res[i]);
	} else if (in_list(op, pure_ops) || starts(op, "arith.") || starts(op, "math.") || starts(op, "ub.") ||
		   ((starts(op, "tt.extern_elementwise") || starts(op, "tt.elementwise_inline_asm")) && pure_call)) {
		copy_operands(r, res, nres, s, e);
	} else if (starts(op, "tt.int_to_ptr")) {
		copy_operands(r, res, nres, s, e);
		kt_flow_op(r->f, KT_FLOW_COPY, 1);
		for (int i = 0; i < nres; i++)
			kt_flow_dst(r->f, res[i]);
	} else if (!in_list(op, inert_ops)) {
		kt_flow_opaque(r->f, "an operation not recognised (a call, impure asm...)");
	}
}

/* One line of the function's body; 1 when the function's closing brace ends it. */
static int body_line(struct ttir_reader *r, const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (s >= e)
		return 0;
	int opens = e[-1] == '{';
	if (*s == '}') {
		if (!opens)
			pop_frame(r);
		return r->depth == 0;
	}
	if (*s == '^') { /* a block's arguments, from its region's pool */
		struct frame *fr = top(r);
		struct span v;
		while (fr && next_ssa(&s, e, &v))
			copy_one(r, value(r, v), fr->pool);
		return 0;
	}
	uint32_t res[KT_TTIR_MAX_RESULTS];
	const char *rest;
	int nres = parse_results(r, s, e, res, KT_TTIR_MAX_RESULTS, &rest);
	if (nres < 0) {
		kt_flow_opaque(r->f, "too many results");
		return 0;
	}
	struct span op = op_name(rest, e);
	if (op.e == op.s) {
		kt_flow_opaque(r->f, "a line not read");
		return 0;
	}
	operation(r, op, res, nres, op.e + (op.e < e && *op.e == '"'), e, opens);
	return 0;
}

/* A scalar type a Triton argument may have (i32, f32, bf16, f8E4M3FN...). */
static int scalar_type(const char *t, const char *e)
{
	return (e - t >= 2 && (t[0] == 'i' || t[0] == 'f') && t[1] >= '0' && t[1] <= '9') ||
	       (e - t >= 4 && !memcmp(t, "bf16", 4));
}

/* The arguments of the signature from its '(' at s: each seeded with its
 * index; their count, or -1 when one is neither a pointer nor a scalar. */
static int seed_arguments(struct ttir_reader *r, const char *s, const char *e)
{
	int depth = 0, n = 0;
	for (const char *p = s; p < e; p++) {
		if (*p == '(' || *p == '<' || *p == '{' || *p == '[')
			depth++;
		else if (*p == ')' || *p == '>' || *p == '}' || *p == ']')
			depth--;
		else if (*p == '"') {
			const char *z = memchr(p + 1, '"', (size_t)(e - p - 1));
			p = z ? z : e - 1;
		} else if (*p == '%' && depth == 1) {
			struct span v;
			const char *q = p;
			next_ssa(&q, e, &v);
			if (q >= e || *q != ':')
				return -1;
			const char *t = q + 1;
			while (t < e && *t == ' ')
				t++;
			if (!(e - t >= 8 && !memcmp(t, "!tt.ptr<", 8)) && !scalar_type(t, e))
				return -1;
			kt_flow_seed(r->f, value(r, v), n++);
			p = q;
		}
		if (depth == 0)
			return n;
	}
	return -1;
}

/* The line of `tt.func ... @kernel(`: [*ls, *le) and the '(' in it; NULL if absent. */
static const char *find_function(const char *text, size_t len, const char *kernel, const char **ls, const char **le)
{
	char pat[600];
	int pn = snprintf(pat, sizeof pat, "@%s(", kernel);
	if (pn <= 0 || (size_t)pn >= sizeof pat)
		return NULL;
	const char *e = text + len;
	for (const char *p = text; (p = memmem(p, (size_t)(e - p), pat, (size_t)pn)) != NULL; p++) {
		const char *s = p;
		while (s > text && s[-1] != '\n')
			s--;
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		if (memmem(s, (size_t)(p - s), "tt.func", 7)) {
			*ls = s;
			*le = nl ? nl : e;
			return p + pn - 1;
		}
	}
	return NULL;
}

/* Read the function's body, from the line after its signature. */
static void read_body(struct ttir_reader *r, const char *s, const char *e)
{
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		const char *le = nl ? nl : e;
		if (body_line(r, s, le) || r->f->oom)
			return;
		s = le + 1;
	}
	kt_flow_opaque(r->f, "the function does not end");
}

int kt_ttir_writes(const char *text, size_t len, const char *kernel, uint32_t nargs, uint8_t *out)
{
	memset(out, KTRACE_WRITTEN_UNKNOWN, nargs);
	const char *ls, *le;
	const char *paren = find_function(text, len, kernel, &ls, &le);
	if (!paren)
		return -1;
	struct kt_flow f;
	kt_flow_init(&f, nargs);
	struct ttir_reader r = {.f = &f};
	int rc = -1;
	if (seed_arguments(&r, paren, le) == (int)nargs && le[-1] == '{') {
		push_frame(&r, FRAME_FUNC, NULL, 0, NULL, 0);
		read_body(&r, le + (le < text + len), text + len);
		rc = kt_flow_solve(&f, out);
	}
	while (r.depth > 0)
		pop_frame(&r);
	for (size_t i = 0; i < r.nowned; i++)
		free(r.owned[i]);
	free(r.owned);
	kt_flow_free(&f);
	return rc;
}
