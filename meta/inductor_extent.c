/* meta/inductor_extent.c: how far an Inductor kernel reaches from each
 * pointer argument, read from its Triton source.
 *
 * Inductor's kernels with static shapes fix their sizes in the body
 * (`xnumel = 65536`, `r0_numel = 256`), derive index variables from the
 * base indexes with integer arithmetic (`x1 = xindex // 256`,
 * `x2 = (xindex % 256)`, `r0_1 = r0_index`) and touch memory only through
 * `tl.load(in_ptr0 + (r0_1 + 256*x0), xmask)`, `tl.store(...)` and
 * `tl.atomic_*(...)`.  Evaluated by interval arithmetic over the base
 * indexes' ranges ([0, numel - 1]: Inductor masks or proves the rest), each
 * access's index expression gives the farthest element it can reach; the
 * largest over a pointer's accesses, plus one, times its element size is
 * how many bytes from the pointer the kernel can touch.  An upper bound,
 * reached for the index forms Inductor emits (sums of a variable's
 * quotient and remainder terms, each at its maximum at the last index).
 * A pointer is left unknown (0) when any use of it is not such an access,
 * an index names anything but integers, sizes and index variables (a
 * loaded value: indirect indexing; a size passed as an argument: dynamic
 * shapes), could be negative, or its type has no known element size.
 * Owns kt_inductor_extents.  Calls libc only.
 */
#include "meta/meta_internal.h"

#include <stdio.h>
#include <string.h>

#define EXTENT_MAX_VALUE (1ull << 56) /* larger: not believed */
#define EXTENT_MAX_DEPTH 16
#define EXTENT_MAX_VARS 256

struct span {
	uint64_t lo, hi;
};

/* The assignments `NAME = EXPR` of the kernel's body, the last one of each name. */
struct assign {
	const char *name, *expr;
	size_t nlen, elen;
};

struct body {
	const char *p, *e;
	struct assign v[EXTENT_MAX_VARS];
	int nv;
};

struct parser {
	const struct body *b;
	const char *p, *e;
	int depth, ok;
};

static int is_ident(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static const struct assign *find_assign(const struct body *b, const char *name, size_t n)
{
	for (int i = b->nv - 1; i >= 0; i--)
		if (b->v[i].nlen == n && !memcmp(b->v[i].name, name, n))
			return &b->v[i];
	return NULL;
}

static struct span eval_expr(struct parser *ps);

/* A span from the text of an assignment's expression (depth-limited). */
static struct span eval_text(struct parser *ps, const char *s, size_t n)
{
	struct parser sub = { ps->b, s, s + n, ps->depth + 1, 1 };
	struct span r = { 0, 0 };

	if (sub.depth > EXTENT_MAX_DEPTH) {
		ps->ok = 0;
		return r;
	}
	r = eval_expr(&sub);
	while (sub.p < sub.e && *sub.p == ' ')
		sub.p++;
	if (!sub.ok || sub.p != sub.e)
		ps->ok = 0;
	return r;
}

/* A base index (xindex, yindex, r0_index, rindex...): [0, <prefix>numel - 1]. */
static int base_index(struct parser *ps, const char *name, size_t n, struct span *r)
{
	char numel[64];
	const struct assign *a;
	struct span s;

	if (n < 6 || n > 40 || memcmp(name + n - 5, "index", 5) != 0)
		return 0;
	snprintf(numel, sizeof numel, "%.*snumel", (int)(n - 5), name);
	a = find_assign(ps->b, numel, strlen(numel));
	if (!a)
		return ps->ok = 0, 1;
	s = eval_text(ps, a->expr, a->elen);
	if (!ps->ok || s.lo != s.hi || s.hi == 0)
		return ps->ok = 0, 1;
	*r = (struct span){ 0, s.hi - 1 };
	return 1;
}

static struct span eval_name(struct parser *ps, const char *name, size_t n)
{
	struct span r = { 0, 0 };
	const struct assign *a;

	if (base_index(ps, name, n, &r))
		return r;
	a = find_assign(ps->b, name, n);
	if (!a) {
		ps->ok = 0; /* an argument (a dynamic size), a loaded value, a constexpr */
		return r;
	}
	return eval_text(ps, a->expr, a->elen);
}

static void skip_spaces(struct parser *ps)
{
	while (ps->p < ps->e && *ps->p == ' ')
		ps->p++;
}

static struct span eval_factor(struct parser *ps)
{
	struct span r = { 0, 0 };
	const char *s;

	skip_spaces(ps);
	if (ps->p < ps->e && *ps->p == '(') {
		ps->p++;
		r = eval_expr(ps);
		skip_spaces(ps);
		if (ps->p >= ps->e || *ps->p != ')')
			ps->ok = 0;
		else
			ps->p++;
		return r;
	}
	s = ps->p;
	while (ps->p < ps->e && is_ident(*ps->p))
		ps->p++;
	if (ps->p == s || (ps->p < ps->e && (*ps->p == '.' || *ps->p == '[' || *ps->p == '('))) {
		ps->ok = 0; /* a call, an attribute, an index: not integer arithmetic */
		return r;
	}
	if (*s >= '0' && *s <= '9') {
		for (const char *q = s; q < ps->p && ps->ok; q++) {
			if (*q < '0' || *q > '9' || r.hi > EXTENT_MAX_VALUE / 10)
				ps->ok = 0;
			else
				r.hi = r.hi * 10 + (uint64_t)(*q - '0');
		}
		r.lo = r.hi;
		return r;
	}
	return eval_name(ps, s, (size_t)(ps->p - s));
}

/* a % c over the span a (c > 0). */
static struct span span_mod(struct span a, uint64_t c)
{
	if (a.hi - a.lo + 1 >= c || a.lo % c > a.hi % c)
		return (struct span){ 0, c - 1 };
	return (struct span){ a.lo % c, a.hi % c };
}

static struct span eval_term(struct parser *ps)
{
	struct span r = eval_factor(ps), f;

	for (;;) {
		skip_spaces(ps);
		if (!ps->ok || ps->p >= ps->e)
			return r;
		if (*ps->p == '*' && ps->p + 1 < ps->e && ps->p[1] != '*') {
			ps->p++;
			f = eval_factor(ps);
			if ((f.hi && r.hi > EXTENT_MAX_VALUE / f.hi))
				ps->ok = 0;
			r = (struct span){ r.lo * f.lo, r.hi * f.hi };
		} else if (*ps->p == '/' && ps->p + 1 < ps->e && ps->p[1] == '/') {
			ps->p += 2;
			f = eval_factor(ps);
			if (f.lo != f.hi || !f.hi)
				ps->ok = 0;
			else
				r = (struct span){ r.lo / f.hi, r.hi / f.hi };
		} else if (*ps->p == '%') {
			ps->p++;
			f = eval_factor(ps);
			if (f.lo != f.hi || !f.hi)
				ps->ok = 0;
			else
				r = span_mod(r, f.hi);
		} else {
			return r;
		}
	}
}

static struct span eval_expr(struct parser *ps)
{
	struct span r = eval_term(ps), t;

	for (;;) {
		skip_spaces(ps);
		if (!ps->ok || ps->p >= ps->e || (*ps->p != '+' && *ps->p != '-'))
			return r;
		if (*ps->p++ == '+') {
			t = eval_term(ps);
			r = (struct span){ r.lo + t.lo, r.hi + t.hi };
		} else {
			t = eval_term(ps);
			if (r.lo < t.hi)
				ps->ok = 0; /* may go below the pointer: masked, not ours to bound */
			else
				r = (struct span){ r.lo - t.hi, r.hi - t.lo };
		}
		if (r.hi > EXTENT_MAX_VALUE)
			ps->ok = 0;
	}
}

/* ---- the kernel's body -------------------------------------------------------- */

/* The body of `def kernel(` in text: its indented lines up to the first line
 * that is not (the end of the kernel's source string); 0, or -1 if absent. */
static int find_body(const char *text, size_t len, const char *kernel, struct body *b)
{
	char pat[512];
	int pl = snprintf(pat, sizeof pat, "def %s(", kernel);
	const char *p = text, *e = text + len, *d = NULL;

	if (pl <= 0 || (size_t)pl >= sizeof pat)
		return -1;
	while (p < e && (d = memmem(p, (size_t)(e - p), pat, (size_t)pl)) && d != text && d[-1] != '\n')
		p = d + 1;
	if (!d || p >= e)
		return -1;
	p = memchr(d, '\n', (size_t)(e - d));
	if (!p)
		return -1;
	b->p = ++p;
	while (p < e && (*p == ' ' || *p == '\n')) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		p = nl ? nl + 1 : e;
	}
	b->e = p;
	return 0;
}

/* Record the line's `NAME = EXPR` (not `NAME: type = ...`, not `==`). */
static void take_assignment(struct body *b, const char *s, const char *e)
{
	const char *n = s, *q;

	while (s < e && is_ident(*s))
		s++;
	if (s == n || b->nv >= EXTENT_MAX_VARS)
		return;
	q = s;
	while (q < e && *q == ' ')
		q++;
	if (q + 1 >= e || q[0] != '=' || q[1] == '=')
		return;
	q++;
	while (q < e && *q == ' ')
		q++;
	while (e > q && (e[-1] == ' ' || e[-1] == '\r'))
		e--;
	b->v[b->nv++] = (struct assign){ n, q, (size_t)(s - n), (size_t)(e - q) };
}

static void collect_assignments(struct body *b)
{
	const char *p = b->p;

	b->nv = 0;
	while (p < b->e) {
		const char *nl = memchr(p, '\n', (size_t)(b->e - p)), *end = nl ? nl : b->e;

		while (p < end && *p == ' ')
			p++;
		take_assignment(b, p, end);
		p = nl ? nl + 1 : b->e;
	}
}

/* How many times name occurs in the body as an identifier of its own. */
static int count_uses(const struct body *b, const char *name, size_t n)
{
	int uses = 0;

	for (const char *p = b->p; p + n <= b->e; p++)
		if (!memcmp(p, name, n) && (p == b->p || !is_ident(p[-1])) && (p + n == b->e || !is_ident(p[n])))
			uses++;
	return uses;
}

/* After "tl.load(" / "tl.store(" / "tl.atomic_xxx(" at p: `name + (EXPR)`
 * followed by ',' or ')'.  Its index span, or ok 0. */
static struct span access_span(const struct body *b, const char *p, const char *name, size_t n, int *ok)
{
	struct parser ps = { b, p, b->e, 0, 1 };
	struct span r = { 0, 0 };
	const char *open;
	int depth = 0;

	while (p < b->e && *p == ' ')
		p++;
	if ((size_t)(b->e - p) < n + 4 || memcmp(p, name, n) || is_ident(p[n]) || memcmp(p + n, " + (", 4)) {
		*ok = 0;
		return r;
	}
	open = p + n + 3;
	for (p = open; p < b->e; p++) {
		depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
		if (!depth || *p == '\n')
			break;
	}
	if (p >= b->e || *p != ')' || (p + 1 < b->e && p[1] != ',' && p[1] != ')')) {
		*ok = 0;
		return r;
	}
	ps.p = open + 1;
	ps.e = p;
	r = eval_expr(&ps);
	skip_spaces(&ps);
	*ok = ps.ok && ps.p == ps.e;
	return r;
}

/* The farthest element the body's accesses through `name` reach: 1 and *hi,
 * or 0 when a use of name is not an access this file can bound. */
static int pointer_reach(const struct body *b, const char *name, uint64_t *hi)
{
	static const char *const ops[] = { "tl.load(", "tl.store(", "tl.atomic_" };
	size_t n = strlen(name);
	int accesses = 0, ok = 1;

	*hi = 0;
	for (const char *p = b->p; ok && p < b->e; p++) {
		for (int k = 0; k < 3; k++) {
			size_t ol = strlen(ops[k]);
			const char *at = p;

			if ((size_t)(b->e - p) < ol || memcmp(p, ops[k], ol) || (p > b->p && is_ident(p[-1])))
				continue;
			at += ol;
			if (k == 2) { /* tl.atomic_add( ... */
				while (at < b->e && is_ident(*at))
					at++;
				if (at >= b->e || *at++ != '(')
					break;
			}
			while (at < b->e && *at == ' ')
				at++;
			if ((size_t)(b->e - at) <= n || memcmp(at, name, n) || is_ident(at[n]))
				break;
			struct span s = access_span(b, at, name, n, &ok);
			if (ok && s.hi > *hi)
				*hi = s.hi;
			accesses++;
			break;
		}
	}
	return ok && accesses && accesses == count_uses(b, name, n);
}

/* Bytes per element of a Triton pointer type ("*fp32"), 0 unknown. */
static uint64_t element_size(const char *type)
{
	static const struct {
		const char *t;
		uint64_t n;
	} sizes[] = { { "*fp32", 4 }, { "*fp16", 2 }, { "*bf16", 2 }, { "*fp64", 8 }, { "*i64", 8 }, { "*u64", 8 },
		      { "*i32", 4 },  { "*u32", 4 },  { "*i16", 2 },  { "*u16", 2 },  { "*i8", 1 },  { "*u8", 1 },
		      { "*i1", 1 },   { "*fp8e4nv", 1 }, { "*fp8e5", 1 }, { "*fp8e4b15", 1 } };

	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		if (!strcmp(type, sizes[i].t))
			return sizes[i].n;
	return 0;
}

int kt_inductor_extents(const char *text, size_t len, const char *kernel, const struct kt_sig_arg *args,
			int nargs, uint64_t *bytes)
{
	static __thread struct body b;
	int known = 0;

	for (int i = 0; i < nargs; i++)
		bytes[i] = 0;
	if (find_body(text, len, kernel, &b) != 0)
		return 0;
	collect_assignments(&b);
	for (int i = 0; i < nargs; i++) {
		uint64_t esize = element_size(args[i].type), hi;

		if (!esize || !pointer_reach(&b, args[i].name, &hi) || hi >= EXTENT_MAX_VALUE / esize)
			continue;
		bytes[i] = (hi + 1) * esize;
		known++;
	}
	return known;
}
