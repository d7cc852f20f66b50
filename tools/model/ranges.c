/* tools/model/ranges.c: NVTX range paths for the tools (see ranges.h).
 *
 * Owns the id -> RANGE table, the text of a path, and reading the
 * frameworks' conventions out of a path: an op is a range named
 * "namespace::name" (PyTorch's aten ops under emit_nvtx, c10d, custom ops),
 * a backward node a range the format flags BACKWARD (PyTorch's
 * "XBackward0"), XLA's kernel ranges read "Thunk:#name=<op name>,hlo_op=
 * <instruction>#" and its module's "XlaModule:#prefix=...,hlo_module=<name>,
 * program_id=N#" (XLA's GPU runtime annotations), with the source
 * locations XLA attaches to them ("\n- file:line[function] op\n-- ...").
 * Calls format/, value.h's ktrace_appendf and libc.
 */
#include "tools/model/ranges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/model/value.h"

static uint64_t mix_id(uint32_t id)
{
	uint64_t x = id;

	x ^= x >> 16;
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 29);
}

static int grow(struct ktrace_ranges *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	struct ktrace_range_node *s = calloc(cap, sizeof *s);

	if (!s)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i].id)
			continue;
		for (j = mix_id(t->slots[i].id) & (cap - 1); s[j].id; j = (j + 1) & (cap - 1))
			;
		s[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = s;
	t->cap = cap;
	return 0;
}

static char *copy_str(struct ktrace_str s)
{
	char *p = malloc((size_t)s.len + 1);

	if (p) {
		memcpy(p, s.ptr, s.len);
		p[s.len] = '\0';
	}
	return p;
}

/* The node of id, or NULL. */
static const struct ktrace_range_node *range_get(const struct ktrace_ranges *t, uint32_t id)
{
	if (!id || !t->cap)
		return NULL;
	for (size_t j = mix_id(id) & (t->cap - 1); t->slots[j].id; j = (j + 1) & (t->cap - 1))
		if (t->slots[j].id == id)
			return &t->slots[j];
	return NULL;
}

int ktrace_ranges_add(struct ktrace_ranges *t, const struct ktrace_rec_range *r)
{
	size_t j;

	if (!r->range_id || range_get(t, r->range_id))
		return 0;
	if ((t->n + 1) * 2 > t->cap && grow(t))
		return -1;
	for (j = mix_id(r->range_id) & (t->cap - 1); t->slots[j].id; j = (j + 1) & (t->cap - 1))
		;
	struct ktrace_range_node *n = &t->slots[j];
	n->domain = copy_str(r->domain);
	n->message = copy_str(r->message);
	n->source = copy_str(r->source);
	if (!n->domain || !n->message || !n->source) {
		free(n->domain);
		free(n->message);
		free(n->source);
		memset(n, 0, sizeof *n);
		return -1;
	}
	n->id = r->range_id;
	n->parent = r->parent;
	n->kind = r->kind;
	n->flags = r->flags;
	n->category = r->category;
	t->n++;
	return 0;
}

void ktrace_ranges_free(struct ktrace_ranges *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		free(t->slots[i].domain);
		free(t->slots[i].message);
		free(t->slots[i].source);
	}
	free(t->slots);
	memset(t, 0, sizeof *t);
}

size_t ktrace_ranges_chain(const struct ktrace_ranges *t, uint32_t id, const struct ktrace_range_node **out,
			   size_t max, int *complete)
{
	const struct ktrace_range_node *up[KTRACE_RANGES_DEPTH];
	size_t n = 0, k = 0;

	*complete = 1;
	while (id && n < KTRACE_RANGES_DEPTH) {
		const struct ktrace_range_node *g = range_get(t, id);

		if (!g) {
			*complete = 0;
			break;
		}
		up[n++] = g;
		id = g->parent;
	}
	if (id && n == KTRACE_RANGES_DEPTH)
		*complete = 0;
	while (n && k < max)
		out[k++] = up[--n];
	return k;
}

const char *ktrace_ranges_path(const struct ktrace_ranges *t, uint32_t id, char *out, size_t cap)
{
	const struct ktrace_range_node *c[KTRACE_RANGES_DEPTH];
	int complete;
	size_t n = ktrace_ranges_chain(t, id, c, KTRACE_RANGES_DEPTH, &complete), used = 0;

	if (!cap)
		return out;
	out[0] = '\0';
	if (id && !n) {
		snprintf(out, cap, "range#%u", id);
		return out;
	}
	for (size_t i = 0; i < n && used + 1 < cap; i++) {
		int k = snprintf(out + used, cap - used, "%s%s%s%s", i ? " > " : (complete ? "" : "... > "),
				 c[i]->domain, c[i]->domain[0] ? ": " : "", c[i]->message);

		used = k < 0 ? used : (size_t)k >= cap - used ? cap - 1 : used + (size_t)k;
	}
	return out;
}

int ktrace_ranges_match(const struct ktrace_ranges *t, uint32_t id, const regex_t *re)
{
	char path[4096];

	return regexec(re, ktrace_ranges_path(t, id, path, sizeof path), 0, NULL, 0) == 0;
}

/* "namespace::name": an op of a framework (PyTorch's aten::, c10d::, custom ops). */
static int is_op(const char *m)
{
	const char *c = strstr(m, "::");

	if (!c || c == m || !c[2])
		return 0;
	for (const char *p = m; *p; p++)
		if (!(*p == '_' || *p == ':' || *p == '.' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z')))
			return 0;
	return 1;
}

/* The value of key in an XLA annotation "Title:#k1=v1,k2=v2#": up to the
 * next ",<key>=" of the keys XLA writes after it, or the closing '#'. */
static int xla_field(const char *m, const char *key, char *out, size_t cap)
{
	static const char *const later[] = { ",hlo_op=", ",hlo_module=", ",program_id=" };
	const char *open = strchr(m, '#'), *end, *v;
	char k[32];

	if (!open)
		return 0;
	snprintf(k, sizeof k, "%s=", key);
	v = strstr(open, k);
	if (!v || (v[-1] != '#' && v[-1] != ','))
		return 0;
	v += strlen(k);
	end = strrchr(v, '#');
	for (size_t i = 0; i < sizeof later / sizeof later[0]; i++) {
		const char *e = strstr(v, later[i]);

		if (e && (!end || e < end))
			end = e;
	}
	if (!end)
		end = v + strlen(v);
	snprintf(out, cap, "%.*s", (int)(end - v), v);
	return 1;
}

static void where_xla(const struct ktrace_range_node *g, struct ktrace_range_where *w)
{
	if (!strncmp(g->message, "Thunk:#", 7)) {
		xla_field(g->message, "hlo_op", w->hlo_op, sizeof w->hlo_op);
		xla_field(g->message, "name", w->op_name, sizeof w->op_name);
	} else if (!strncmp(g->message, "XlaModule:#", 11)) {
		xla_field(g->message, "hlo_module", w->module, sizeof w->module);
	}
}

/* The kind of op a fused kernel is built around, from XLA's instruction
 * name: "input_scatter_fusion.2,unique_hlo_op_id=9" -> "scatter"
 * (prefixes input_/loop_/wrapped_, the suffix _fusion and a .N cut). */
static void hero_kind(const char *hlo_op, char *out, size_t cap)
{
	static const char *const prefixes[] = { "input_", "loop_", "wrapped_", "triton_" };
	size_t n = strcspn(hlo_op, ",.");
	const char *p = hlo_op;

	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (!strncmp(p, prefixes[i], strlen(prefixes[i])) && strlen(prefixes[i]) < n) {
			n -= strlen(prefixes[i]);
			p += strlen(prefixes[i]);
			break;
		}
	if (n > 7 && !strncmp(p + n - 7, "_fusion", 7))
		n -= 7;
	snprintf(out, cap, "%.*s", (int)n, p);
}

/* One line of XLA's source locations: its depth (leading '-'), its
 * "file:line[function]" and the op name after it (empty when none). */
static int source_entry(const char *p, const char *e, const char **loc, size_t *loclen, const char **op,
			size_t *oplen)
{
	int depth = 0;
	const char *f, *sp;

	while (p + depth < e && p[depth] == '-')
		depth++;
	f = p + depth;
	while (f < e && *f == ' ')
		f++;
	if (f >= e)
		return -1;
	sp = memchr(f, ' ', (size_t)(e - f));
	*loc = f;
	*loclen = (size_t)((sp ? sp : e) - f);
	*op = sp ? sp + 1 : e;
	*oplen = (size_t)(e - *op);
	return depth;
}

/* Whether an op name's last component ("jit(step)/jvp(kt_pool)/scatter-add")
 * is of the kind (its name holds it). */
static int op_of_kind(const char *op, size_t n, const char *kind)
{
	const char *last = op;

	for (size_t i = 0; i < n; i++)
		if (op[i] == '/')
			last = op + i + 1;
	n -= (size_t)(last - op);
	for (size_t k = strlen(kind), i = 0; k && i + k <= n; i++)
		if (!strncmp(last + i, kind, k))
			return 1;
	return 0;
}

/* The innermost frame of XLA's source locations: of the deepest lines (most
 * leading '-'), the first whose op is of the fused kernel's kind (a fusion
 * lists every op it holds), else the first; its "file:line[function]" into
 * line, and its op name into op unless op holds one already (an older XLA's
 * Thunk range names it). */
static void source_line(const char *src, const char *hlo_op, char *line, size_t lcap, char *op, size_t ocap)
{
	char kind[64];
	const char *bl = NULL, *bo = NULL;
	size_t bll = 0, bol = 0;
	int best = -1, matched = 0;

	hero_kind(hlo_op, kind, sizeof kind);
	for (const char *p = src; *p;) {
		const char *e = strchr(p, '\n'), *loc, *on;
		size_t ll, ol;
		int depth, of_kind;

		if (!e)
			e = p + strlen(p);
		depth = source_entry(p, e, &loc, &ll, &on, &ol);
		of_kind = depth >= 0 && kind[0] && op_of_kind(on, ol, kind);
		if (depth > best || (depth == best && of_kind && !matched)) {
			best = depth;
			matched = of_kind;
			bl = loc, bll = ll, bo = on, bol = ol;
		}
		p = *e ? e + 1 : e;
	}
	if (bl)
		snprintf(line, lcap, "%.*s", (int)bll, bl);
	if (bo && bol && !op[0])
		snprintf(op, ocap, "%.*s", (int)bol, bo);
}

/* XLA's source locations of the path: the innermost range's that has some,
 * after its module's (which holds the frames common to the module). */
static void where_source(const struct ktrace_range_node *const *c, size_t n, struct ktrace_range_where *w)
{
	const struct ktrace_range_node *mod = NULL;
	size_t k = n;

	while (k && !c[k - 1]->source[0])
		k--;
	if (!k)
		return;
	for (size_t i = 0; i + 1 < k; i++)
		if (!strncmp(c[i]->message, "XlaModule:#", 11) && c[i]->source[0])
			mod = c[i];
	snprintf(w->source, sizeof w->source, "%s%s", mod ? mod->source : "", c[k - 1]->source);
	source_line(c[k - 1]->source, w->hlo_op, w->line, sizeof w->line, w->op_name, sizeof w->op_name);
}

void ktrace_ranges_where(const struct ktrace_ranges *t, const struct ktrace_range_ref *ref,
			 struct ktrace_range_where *w)
{
	const struct ktrace_range_node *c[KTRACE_RANGES_DEPTH];
	int complete;
	size_t n = ktrace_ranges_chain(t, ref->range, c, KTRACE_RANGES_DEPTH, &complete);

	memset(w, 0, sizeof *w);
	ktrace_ranges_path(t, ref->range, w->path, sizeof w->path);
	w->fw_seq_kind = ref->fw_seq_kind;
	w->fw_seq = ref->fw_seq;
	w->ref_flags = ref->flags;
	for (size_t i = 0; i < n; i++) {
		const struct ktrace_range_node *g = c[i];

		if (is_op(g->message))
			snprintf(w->op, sizeof w->op, "%s", g->message);
		if ((g->flags & KTRACE_RANGEF_BACKWARD) && (g->flags & KTRACE_RANGEF_FW_SEQ))
			snprintf(w->backward, sizeof w->backward, "%s", g->message);
		where_xla(g, w);
	}
	where_source(c, n, w); /* after the HLO op: it picks the fused op's line */
}

const char *ktrace_ranges_where_text(const struct ktrace_range_where *w, char *out, size_t cap)
{
	size_t n = 0;

	if (!cap)
		return out;
	out[0] = '\0';
	if (w->hlo_op[0]) {
		ktrace_appendf(out, cap, &n, "HLO %s", w->hlo_op);
		if (w->op_name[0])
			ktrace_appendf(out, cap, &n, " (%s)", w->op_name);
		if (w->module[0])
			ktrace_appendf(out, cap, &n, " of %s", w->module);
	} else if (w->op[0]) {
		ktrace_appendf(out, cap, &n, "%s", w->op);
		if (w->fw_seq_kind == KTRACE_FWSEQ_BACKWARD)
			ktrace_appendf(out, cap, &n, " in the backward of forward op seq %llu", (unsigned long long)w->fw_seq);
		if (w->fw_seq_kind == KTRACE_FWSEQ_BACKWARD && w->backward[0])
			ktrace_appendf(out, cap, &n, " (%s)", w->backward);
		if (w->fw_seq_kind == KTRACE_FWSEQ_FORWARD)
			ktrace_appendf(out, cap, &n, " (forward op seq %llu)", (unsigned long long)w->fw_seq);
	}
	if (w->path[0])
		ktrace_appendf(out, cap, &n, n ? ", in %s" : "%s", w->path);
	if (w->path[0] && (w->ref_flags & KTRACE_RANGEREF_GRAPH_NODE))
		ktrace_appendf(out, cap, &n, " (where its graph node was made)");
	return out;
}
