/* meta/ptx_writes.c: which parameters an `.entry` body can write through,
 * from its PTX (the data flow of meta/write_flow.h).
 *
 * Each statement becomes a flow op:
 *   ld.param %r, [<param>(+off)]  %r carries the parameter (any word of it);
 *   other loads (ld, ldu, ldmatrix, tex, suld...)  their results are MEM:
 *       pointers read from memory may point anywhere;
 *   st, atom, red, multimem, cp (async copies), sust, sured, discard, wmma.store:
 *       the first [address] is written; the space the opcode names first
 *       decides where: .global or none (generic) is a STORE, .shared,
 *       .local, .param a private store; every other register stored is data;
 *       atomics' results are MEM;
 *   stores whose address is a handle's, not the data's, prove nothing: TMA
 *       tensor stores (cp.*.tensor to .global: a descriptor), tensormap.*,
 *       surface stores (sust, sured), multimem (a multicast object, whose
 *       memory is some parameter's buffer under another address); nor does
 *       any other instruction with an [address] operand;
 *   call: a .func of the same text is read the same way (once, on its first
 *       call; recursion and calls deeper than KT_PTX_MAX_CALL_DEPTH prove
 *       nothing): through the value the caller stored in its k-th argument
 *       (st.param, a copy) goes what it does through its k-th parameter;
 *       vprintf and __assertfail write nothing of the program's; any other
 *       call proves nothing; a returned value comes from memory (MEM);
 *   anything else: its first operand (registers, a {vector}, %p|%q) gets
 *       the taint of every other operand.
 * Symbols other than the entry's parameters (global variables, shared
 * arrays, call parameters) are MEM; cvta from .local, .shared, .param or
 * .const gives PRIVATE (a generic address of memory no parameter points
 * into), so generic stores through it write no buffer of the program's.  Comments, .loc lines, directives,
 * labels and braces are skipped.
 *
 * Owns kt_ptx_classify_bodies (the entries and .func bodies ptx.c kept) and
 * kt_ptx_bodies_free.  Calls write_flow.c.
 */
#include "meta/write_flow.h"

#include <stdio.h>
#include <stdlib.h>

#define KT_PTX_MAX_OPERANDS 64

enum space { SPACE_GENERIC, SPACE_GLOBAL, SPACE_PRIVATE };

struct span {
	const char *s, *e;
};

#define KT_PTX_MAX_CALL_DEPTH 16

/* The body being read: its flow, its function's name, every body of the
 * PTX text (for the functions it calls), how deep in calls it is. */
struct ptx_body {
	struct kt_flow *f;
	const char *entry;
	size_t entry_len;
	struct kt_ptx_bodies *all;
	int depth;
};

static int body_writes(struct kt_ptx_bodies *all, const struct kt_ptx_body *body, const char *const *param_names,
		       int depth, uint8_t *out);

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

static int span_is(struct span t, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(t.e - t.s) == n && !memcmp(t.s, s, n);
}

/* 1 if a line-long directive (.loc, .file: no ';' ends them) starts at c[i]. */
static int line_directive_at(const char *c, size_t i, size_t len)
{
	if (c[i] != '.' || (i > 0 && c[i - 1] != '\n' && c[i - 1] != ' ' && c[i - 1] != '\t'))
		return 0;
	size_t n = len - i >= 5 && !strncmp(c + i, ".file", 5) ? 5 : len - i >= 4 && !strncmp(c + i, ".loc", 4) ? 4 : 0;
	return n && (i + n == len || !is_name_char(c[i + n]));
}

/* The body with comments and .loc/.file lines blanked, so that names found
 * in it may point into it; NULL when memory runs out. */
static char *blank_comments(const char *text, size_t len)
{
	char *c = malloc(len + 1);
	if (!c)
		return NULL;
	memcpy(c, text, len);
	c[len] = 0;
	for (size_t i = 0; i < len; i++) {
		size_t end;
		if ((c[i] == '/' && i + 1 < len && c[i + 1] == '/') || line_directive_at(c, i, len)) {
			for (end = i; end < len && c[end] != '\n'; end++)
				;
		} else if (c[i] == '/' && i + 1 < len && c[i + 1] == '*') {
			for (end = i + 2; end + 1 < len && !(c[end] == '*' && c[end + 1] == '/'); end++)
				;
			end = end + 1 < len ? end + 2 : len;
		} else {
			continue;
		}
		memset(c + i, ' ', end - i);
		i = end - 1;
	}
	return c;
}

/* The parameter a symbol names (<entry>_param_<i>), or -1. */
static int32_t generated_param(const struct ptx_body *pb, const char *s, size_t n)
{
	size_t el = pb->entry_len;
	if (n <= el + 7 || memcmp(s, pb->entry, el) != 0 || memcmp(s + el, "_param_", 7) != 0)
		return -1;
	uint32_t v = 0;
	for (size_t i = el + 7; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > 100000)
			return -1;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	return v < pb->f->nparams ? (int32_t)v : -1;
}

/* The value of a symbol: a parameter's, or MEM for any other. */
static uint32_t symbol_value(const struct ptx_body *pb, const char *s, size_t n)
{
	uint32_t id = kt_flow_value(pb->f, s, n);
	if (!pb->f->oom && pb->f->seed[id] == KT_FLOW_SEED_NONE) {
		int32_t p = generated_param(pb, s, n);
		kt_flow_seed(pb->f, id, p >= 0 ? p : KT_FLOW_SEED_MEM);
	}
	return id;
}

/* Registers and symbols of an operand, each passed to add(f, id). */
static void operand_values(const struct ptx_body *pb, struct span o, void (*add)(struct kt_flow *, uint32_t))
{
	const char *p = o.s;
	while (p < o.e) {
		if (*p == '%' || (is_name_char(*p) && !(*p >= '0' && *p <= '9'))) {
			const char *s = p++;
			while (p < o.e && (is_name_char(*p) || *p == '.'))
				p++;
			if (*s == '%')
				add(pb->f, kt_flow_value(pb->f, s, (size_t)(p - s)));
			else
				add(pb->f, symbol_value(pb, s, (size_t)(p - s)));
		} else if (*p >= '0' && *p <= '9') {
			while (p < o.e && (is_name_char(*p) || *p == '.'))
				p++;
		} else {
			p++;
		}
	}
}

/* Split [s, e) at top-level commas; the count, or -1 when too many. */
static int split_operands(const char *s, const char *e, struct span *ops)
{
	int n = 0, depth = 0;
	const char *start = s;
	for (const char *p = s; p <= e; p++) {
		if (p < e && (*p == '[' || *p == '{' || *p == '('))
			depth++;
		else if (p < e && (*p == ']' || *p == '}' || *p == ')'))
			depth--;
		else if (p == e || (*p == ',' && depth <= 0)) {
			while (start < p && (*start == ' ' || *start == '\t' || *start == '\n' || *start == '\r'))
				start++;
			if (start < p) {
				if (n == KT_PTX_MAX_OPERANDS)
					return -1;
				ops[n++] = (struct span){start, p};
			}
			start = p + 1;
		}
	}
	return n;
}

static int is_register_list(struct span o)
{
	return o.s < o.e && (*o.s == '%' || *o.s == '{');
}

/* The opcode's first state space qualifier. */
static enum space opcode_space(struct span op)
{
	for (const char *p = op.s; p < op.e; p++) {
		if (*p != '.')
			continue;
		size_t rest = (size_t)(op.e - p - 1);
		if (rest >= 6 && !memcmp(p + 1, "global", 6))
			return SPACE_GLOBAL;
		if ((rest >= 6 && !memcmp(p + 1, "shared", 6)) || (rest >= 5 && !memcmp(p + 1, "local", 5)) ||
		    (rest >= 5 && !memcmp(p + 1, "param", 5)) || (rest >= 5 && !memcmp(p + 1, "const", 5)))
			return SPACE_PRIVATE;
	}
	return SPACE_GENERIC;
}

/* 1 if the dotted opcode has the component c. */
static int has_component(struct span op, const char *c)
{
	size_t n = strlen(c);
	for (const char *p = op.s; p + n <= op.e; p++)
		if ((p == op.s || p[-1] == '.') && !memcmp(p, c, n) && (p + n == op.e || p[n] == '.'))
			return 1;
	return 0;
}

static int first_bracket(const struct span *ops, int n)
{
	for (int i = 0; i < n; i++)
		if (*ops[i].s == '[')
			return i;
	return -1;
}

/* The opcode's root (before the first '.') is one of the NULL-terminated list. */
static int root_in(struct span op, const char *const *roots)
{
	const char *dot = memchr(op.s, '.', (size_t)(op.e - op.s));
	struct span root = {op.s, dot ? dot : op.e};
	for (; *roots; roots++)
		if (span_is(root, *roots))
			return 1;
	return 0;
}

/* A load: `ld.param` of a parameter copies it, any other gives MEM. */
static void add_load(const struct ptx_body *pb, struct span op, const struct span *ops, int n)
{
	int b = first_bracket(ops, n);
	int dst = n > 0 && is_register_list(ops[0]);
	if (b >= 0 && dst && has_component(op, "param") && !memchr(ops[b].s, '%', (size_t)(ops[b].e - ops[b].s))) {
		kt_flow_op(pb->f, KT_FLOW_COPY, 0);
		operand_values(pb, ops[0], kt_flow_dst);
		operand_values(pb, ops[b], kt_flow_src);
		return;
	}
	if (!dst)
		return;
	kt_flow_op(pb->f, KT_FLOW_LOAD, 1);
	operand_values(pb, ops[0], kt_flow_dst);
}

/* Stores whose address names a handle, not the bytes written: a tensor map,
 * a surface, a multicast object (its buffer has another address too). */
static const char *const handle_roots[] = {"tensormap", "sust", "sured", "multimem", NULL};

/* A store, atomic, reduction or copy to memory at its first [address]. */
static void add_store(const struct ptx_body *pb, struct span op, const struct span *ops, int n)
{
	int b = first_bracket(ops, n);
	enum space sp = opcode_space(op);
	if (b < 0)
		return;
	if (sp != SPACE_PRIVATE && (has_component(op, "tensor") || root_in(op, handle_roots))) {
		kt_flow_opaque(pb->f, "a store whose address is a descriptor's, a surface's or a multicast object's");
		return;
	}
	if (b > 0 && is_register_list(ops[0])) {
		kt_flow_op(pb->f, KT_FLOW_LOAD, 1); /* an atomic's old value */
		operand_values(pb, ops[0], kt_flow_dst);
	}
	kt_flow_op(pb->f, sp == SPACE_PRIVATE ? KT_FLOW_STORE_PRIVATE : KT_FLOW_STORE, 0);
	operand_values(pb, ops[b], kt_flow_addr);
	for (int i = 0; i < n; i++) /* other [addresses] are read (a copy's source) */
		if (*ops[i].s != '[' && !(i == 0 && b > 0 && is_register_list(ops[0])))
			operand_values(pb, ops[i], kt_flow_src);
}

/* A call's argument named in o ("param0", "[param0+0]"): its value, made
 * unseeded (it holds what the caller stores in it); -1 when o names none. */
static int64_t argument_value(const struct ptx_body *pb, struct span o)
{
	const char *p = o.s;
	while (p < o.e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '['))
		p++;
	const char *q = p;
	while (q < o.e && is_name_char(*q))
		q++;
	if (q == p || (*p >= '0' && *p <= '9'))
		return -1;
	return kt_flow_value(pb->f, p, (size_t)(q - p));
}

/* `st.param [sym], v` before a call: the argument sym holds v (read at the call). */
static int add_argument(const struct ptx_body *pb, struct span op, const struct span *ops, int n)
{
	if (n != 2 || !root_in(op, (const char *const[]){"st", NULL}) || !has_component(op, "param") ||
	    *ops[0].s != '[' || memchr(ops[0].s, '%', (size_t)(ops[0].e - ops[0].s)))
		return 0;
	int64_t arg = argument_value(pb, ops[0]);
	if (arg < 0)
		return 0;
	kt_flow_op(pb->f, KT_FLOW_COPY, 0);
	kt_flow_dst(pb->f, (uint32_t)arg);
	operand_values(pb, ops[1], kt_flow_src);
	return 1;
}

/* The .func named s[0..n) of the text, read (once) for what it writes
 * through its parameters; NULL when it is not defined there, calls itself,
 * or lies too deep. */
static const struct kt_ptx_body *callee(const struct ptx_body *pb, struct span name)
{
	for (size_t i = 0; i < pb->all->n; i++) {
		struct kt_ptx_body *fn = &pb->all->v[i];
		if (fn->kernel != UINT32_MAX || fn->name_len != (size_t)(name.e - name.s) ||
		    memcmp(fn->name, name.s, fn->name_len) != 0)
			continue;
		if (fn->state == 1 || pb->depth >= KT_PTX_MAX_CALL_DEPTH)
			return NULL;
		if (fn->state == 0) {
			fn->state = 1;
			fn->written = calloc(fn->nparams ? fn->nparams : 1, 1);
			fn->none_proven = !fn->written || body_writes(pb->all, fn, NULL, pb->depth + 1, fn->written) != 0;
			fn->state = 2;
		}
		return fn;
	}
	return NULL;
}

/* A call `call (ret), f, (param0, ...)`.  vprintf and __assertfail write no
 * memory of the program's.  A .func of the text: what it writes through
 * its k-th parameter is written through the value the caller stored in its
 * k-th argument (st.param), and one it cannot prove makes that value escape;
 * a .func that may write anywhere, any other callee, an indirect call: no
 * proof. */
static void add_call(const struct ptx_body *pb, const struct span *ops, int n)
{
	int i = 0;
	while (i < n && *ops[i].s == '(')
		i++;
	if (i < n && (span_is(ops[i], "vprintf") || span_is(ops[i], "__assertfail")))
		return;
	const struct kt_ptx_body *fn = i < n && *ops[i].s != '%' ? callee(pb, ops[i]) : NULL;
	if (!fn || fn->none_proven || i + 1 >= n || *ops[i + 1].s != '(') {
		kt_flow_opaque(pb->f, "a call");
		return;
	}
	struct span args = {ops[i + 1].s + 1, ops[i + 1].e};
	struct span arg[KT_PTX_MAX_OPERANDS];
	int nargs = split_operands(args.s, args.e > args.s && args.e[-1] == ')' ? args.e - 1 : args.e, arg);
	if (nargs < 0 || (uint32_t)nargs > fn->nparams) {
		kt_flow_opaque(pb->f, "a call not read");
		return;
	}
	for (int k = 0; k < nargs; k++) {
		uint8_t w = fn->written[k];
		int64_t v = argument_value(pb, arg[k]);
		if (v < 0) {
			kt_flow_opaque(pb->f, "a call's argument not read");
			return;
		}
		if (w == KTRACE_WRITTEN_READ_ONLY)
			continue;
		kt_flow_op(pb->f, w == KTRACE_WRITTEN_WRITTEN ? KT_FLOW_STORE : KT_FLOW_STORE_PRIVATE, 0);
		if (w == KTRACE_WRITTEN_WRITTEN)
			kt_flow_addr(pb->f, (uint32_t)v);
		else
			kt_flow_src(pb->f, (uint32_t)v);
	}
}


static const char *const load_roots[] = {"ld", "ldu", "ldmatrix", "tex", "tld4", "suld", "prefetch",
					 "prefetchu", "applypriority", "txq", "suq", NULL};
static const char *const store_roots[] = {"st", "stmatrix", "red", "atom", "sust", "sured", "discard",
					  "multimem", "cp", "mbarrier", "tensormap", "tcgen05", NULL};

/* One instruction: opcode op, operands ops[0..n). */
static void add_instruction(const struct ptx_body *pb, struct span op, const struct span *ops, int n)
{
	int b = first_bracket(ops, n);
	if (root_in(op, (const char *const[]){"call", NULL})) {
		add_call(pb, ops, n);
	} else if (add_argument(pb, op, ops, n)) {
		/* a call's argument */
	} else if (root_in(op, (const char *const[]){"cvta", NULL}) && !has_component(op, "to") &&
		   opcode_space(op) == SPACE_PRIVATE && n > 0 && is_register_list(ops[0])) {
		kt_flow_op(pb->f, KT_FLOW_LOAD, KT_FLOW_GEN_PRIVATE); /* a generic address of private memory */
		operand_values(pb, ops[0], kt_flow_dst);
	} else if (root_in(op, load_roots) || has_component(op, "prefetch") || has_component(op, "ld_reduce") ||
		   (root_in(op, (const char *const[]){"wmma", NULL}) && has_component(op, "load"))) {
		add_load(pb, op, ops, n);
	} else if (root_in(op, store_roots) || (root_in(op, (const char *const[]){"wmma", NULL}) &&
						has_component(op, "store"))) {
		static const char tensor_memory[] = "tcgen05.shared"; /* private, like shared memory */
		if (root_in(op, (const char *const[]){"tcgen05", NULL}))
			op = (struct span){tensor_memory, tensor_memory + sizeof tensor_memory - 1};
		add_store(pb, op, ops, n);
	} else if (b >= 0) {
		kt_flow_opaque(pb->f, "an instruction with a memory operand not recognised");
	} else if (n > 1 && is_register_list(ops[0])) {
		kt_flow_op(pb->f, KT_FLOW_COPY, 0);
		operand_values(pb, ops[0], kt_flow_dst);
		for (int i = 1; i < n; i++)
			operand_values(pb, ops[i], kt_flow_src);
	}
}

/* Skip braces, labels and whitespace at the start of a statement. */
static const char *skip_prefix(const char *s, const char *e)
{
	for (;;) {
		while (s < e && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '{' || *s == '}'))
			s++;
		const char *p = s;
		while (p < e && is_name_char(*p))
			p++;
		if (p > s && p < e && *p == ':' && (p + 1 >= e || p[1] != ':'))
			s = p + 1;
		else
			return s;
	}
}

/* One statement [s, e) (its ';' not included). */
static void add_statement(const struct ptx_body *pb, const char *s, const char *e)
{
	s = skip_prefix(s, e);
	if (s >= e || *s == '.')
		return; /* a directive: .reg, .local, .shared, .param, .pragma */
	if (*s == '@') {
		while (s < e && *s != ' ' && *s != '\t')
			s++;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
	}
	struct span op = {s, s};
	while (op.e < e && (is_name_char(*op.e) || *op.e == '.' || *op.e == ':'))
		op.e++;
	if (op.e == op.s)
		return;
	struct span ops[KT_PTX_MAX_OPERANDS];
	int n = split_operands(op.e, e, ops);
	if (n < 0)
		kt_flow_opaque(pb->f, "an instruction with too many operands");
	else
		add_instruction(pb, op, ops, n);
}

/* out[i] = enum ktrace_param_written for parameter i of `body` (param_names:
 * its declared names, may be NULL; generated <name>_param_<i> names are
 * recognised).  0, 1 when nothing about it is proven (it may write
 * anywhere), -1 (all unknown) when memory runs out. */
static int body_writes(struct kt_ptx_bodies *all, const struct kt_ptx_body *body, const char *const *param_names,
		       int depth, uint8_t *out)
{
	memset(out, KTRACE_WRITTEN_UNKNOWN, body->nparams);
	char *text = blank_comments(body->text, body->len);
	if (!text)
		return -1;
	struct kt_flow f;
	kt_flow_init(&f, body->nparams);
	struct ptx_body pb = {&f, body->name, body->name_len, all, depth};
	for (uint32_t i = 0; i < body->nparams && param_names; i++)
		if (param_names[i] && param_names[i][0])
			kt_flow_seed(&f, kt_flow_value(&f, param_names[i], strlen(param_names[i])), (int32_t)i);
	const char *s = text, *e = text + body->len;
	while (s < e) {
		const char *semi = memchr(s, ';', (size_t)(e - s));
		const char *end = semi ? semi : e;
		add_statement(&pb, s, end);
		s = end + 1;
	}
	int rc = kt_flow_solve(&f, out);
	if (rc == 0 && f.none_proven)
		rc = 1;
	kt_flow_free(&f);
	free(text);
	return rc;
}

void kt_ptx_classify_bodies(struct kt_meta_builder *b, struct kt_ptx_bodies *bodies)
{
	for (size_t i = 0; i < bodies->n; i++) {
		const struct kt_ptx_body *body = &bodies->v[i];
		if (body->kernel >= b->img->nkernels)
			continue;
		struct ktrace_meta_kernel *k = &b->img->kernels[body->kernel];
		const char **names = calloc(body->nparams ? body->nparams : 1, sizeof *names);
		uint8_t *written = calloc(body->nparams ? body->nparams : 1, 1);
		if (names && written && k->nparams == body->nparams) {
			for (uint32_t j = 0; j < body->nparams; j++) /* hand-written names; nvcc's are recognised */
				names[j] = k->params[j].name_source == KTRACE_NAME_PTX ? k->params[j].name : NULL;
			body_writes(bodies, body, names, 0, written);
			for (uint32_t j = 0; j < body->nparams; j++)
				kt_param_set_written(&k->params[j], written[j], KTRACE_WRITTEN_SRC_PTX);
		}
		free(names);
		free(written);
	}
}

void kt_ptx_bodies_free(struct kt_ptx_bodies *bodies)
{
	for (size_t i = 0; i < bodies->n; i++)
		free(bodies->v[i].written);
	free(bodies->v);
	memset(bodies, 0, sizeof *bodies);
}
