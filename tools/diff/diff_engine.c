/* tools/diff/diff_engine.c: comparing aligned launches and classifying divergences.
 *
 * Owns the comparison of two launches of the same kernel (pointer regions by
 * their position in the parameter buffer, that is by parameter and offset
 * within it, never by raw address: post-hashes for outputs, pre-hashes and
 * scalar bytes for inputs; hashes that are missing or cover different
 * extents make a launch "unverified", never equal, and say why
 * (tools/unverified.h), except for regions guessed by their value alone,
 * each of which then costs itself only), the classification of a divergence (all inputs identical: the
 * kernel is non-deterministic; an input differs: the last writer of that
 * input in each run), the per-kernel summary, warnings about the traces,
 * and the exit status (which what the program observed, diff_results.c,
 * decides too).
 */
#include "tools/diff/diff_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/diff/diff_order.h"
#include "tools/model/array.h"

enum { H_EQ = 0, H_DIFF = 1, H_UNV = 2 };

/* ---- small helpers --------------------------------------------------------- */

/* How region x of a launch of ta and region y of a launch of tb compare:
 * their post-hashes (post) or pre-hashes. */
static int hash_cmp(const struct tm_trace *ta, const struct tm_region *x, const struct tm_trace *tb,
		    const struct tm_region *y, int post, const char **why)
{
	uint16_t f = post ? KTRACE_REGIONF_POST : KTRACE_REGIONF_PRE;
	if (!x || !y) {
		*why = !x ? "pointer not tracked in run A" : "pointer not tracked in run B";
		return H_UNV;
	}
	if ((x->flags & KTRACE_REGIONF_UNHASHED) || !(x->flags & f)) {
		*why = "not hashed in run A";
		return H_UNV;
	}
	if ((y->flags & KTRACE_REGIONF_UNHASHED) || !(y->flags & f)) {
		*why = "not hashed in run B";
		return H_UNV;
	}
	if (ktrace_tm_region_hash_len(ta, x) != ktrace_tm_region_hash_len(tb, y)) {
		*why = "hashed extents differ between the runs";
		return H_UNV;
	}
	uint64_t hx = post ? x->post_hash : x->pre_hash, hy = post ? y->post_hash : y->pre_hash;
	*why = NULL;
	return hx == hy ? H_EQ : H_DIFF;
}

/* Did the launch (possibly) write the region?  Unchanged (pre == post) is no;
 * without both hashes we cannot tell: yes. */
static int region_written(const struct tm_region *r)
{
	if (!r)
		return 0;
	if ((r->flags & KTRACE_REGIONF_PRE) && (r->flags & KTRACE_REGIONF_POST) && !(r->flags & KTRACE_REGIONF_UNHASHED))
		return r->pre_hash != r->post_hash;
	return 1;
}

/* An output divergence: the post-hashes differ and the launch wrote the
 * region in at least one run (a read-only input that already differed before
 * the launch differs after it too, but that is not this launch's doing). */
static int output_differs(const struct diff_result *res, const struct tm_region *x, const struct tm_region *y,
			  const char **why)
{
	int c = hash_cmp(res->a, x, res->b, y, 1, why);
	if (c == H_DIFF && !region_written(x) && !region_written(y))
		return H_EQ;
	return c;
}

/* A collective's buffer hashed as a region of the launch it became (format
 * 1.13): its param_offset names the NCCL call, not a parameter byte. */
static int is_coll_buffer(const struct tm_region *r)
{
	return (r->flags & KTRACE_REGIONF_COLL_BUFFER) != 0;
}

static const struct tm_param *param_of_region(const struct tm_kernel *k, const struct tm_region *r)
{
	if (is_coll_buffer(r))
		return NULL;
	if (r->ordinal != 0xffff)
		for (uint32_t i = 0; i < k->nparams; i++)
			if (k->params[i].ordinal == r->ordinal)
				return &k->params[i];
	return ktrace_tm_param_at(k, r->param_offset);
}

void ktrace_diff_region_name(const struct tm_kernel *k, const struct tm_region *r, char *buf, size_t cap,
			     int *ordinal)
{
	const struct tm_param *p = param_of_region(k, r);
	if (is_coll_buffer(r)) {
		snprintf(buf, cap, "%s (NCCL call %" PRIu32 ")", r->param_offset & 1 ? "recvbuff" : "sendbuff",
			 r->param_offset >> 1);
		*ordinal = -1;
		return;
	}
	if (!p) {
		snprintf(buf, cap, "param@%" PRIu32, r->param_offset);
		*ordinal = r->ordinal == 0xffff ? -1 : r->ordinal;
		return;
	}
	*ordinal = p->ordinal;
	char base[80];
	if (p->name[0])
		snprintf(base, sizeof base, "%s", p->name);
	else
		snprintf(base, sizeof base, "arg%u", (unsigned)p->ordinal);
	if (r->param_offset != p->offset)
		snprintf(buf, cap, "%s+%" PRIu32, base, r->param_offset - p->offset);
	else
		snprintf(buf, cap, "%s", base);
}

int ktrace_diff_region_is_const(const struct tm_kernel *k, const struct tm_region *r)
{
	const struct tm_param *p = param_of_region(k, r);
	return p && (p->flags & KTRACE_PARAMF_CONST) && !(r->flags & KTRACE_REGIONF_IN_STRUCT);
}

/* Is byte `off` of the parameter buffer part of a pointer word of either run? */
static int masked(const struct tm_launch *la, const struct tm_launch *lb, uint32_t off)
{
	for (uint32_t i = 0; i < la->look->nregions; i++)
		if (!is_coll_buffer(&la->regions[i]) && off >= la->regions[i].param_offset &&
		    off - la->regions[i].param_offset < 8)
			return 1;
	for (uint32_t i = 0; i < lb->look->nregions; i++)
		if (!is_coll_buffer(&lb->regions[i]) && off >= lb->regions[i].param_offset &&
		    off - lb->regions[i].param_offset < 8)
			return 1;
	return 0;
}

/* The parameter bytes of a pair of launches (ktrace_tm_params), or their
 * pieces' (ktrace_tm_param_bytes): a launch's own but for its pointer
 * words, which the comparison skips. */
struct param_pair {
	const uint8_t *a, *b;
};

/* Compare bytes [off, off+size) outside pointer words.  Returns the first
 * differing offset relative to off, or -1 when equal. */
static long bytes_differ(const struct tm_launch *la, const struct tm_launch *lb, const struct param_pair *pp,
			 uint32_t off, uint32_t size)
{
	for (uint32_t q = 0; q < size; q++) {
		uint32_t o = off + q;
		if (o >= la->look->param_bytes_len || o >= lb->look->param_bytes_len)
			return la->look->param_bytes_len == lb->look->param_bytes_len ? -1 : (long)q;
		if (pp->a[o] != pp->b[o] && !masked(la, lb, o))
			return (long)q;
	}
	return -1;
}

struct arg_list {
	struct diff_arg *v;
	size_t n, cap;
};

static struct diff_arg *arg_push(struct arg_list *l)
{
	if (ktrace_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v))
		return NULL;
	struct diff_arg *a = &l->v[l->n++];
	memset(a, 0, sizeof *a);
	return a;
}

/* A new entry of l for the parameter bytes as a whole ("params"), or NULL
 * when memory runs out. */
static struct diff_arg *params_arg(struct arg_list *l)
{
	struct diff_arg *a = arg_push(l);
	if (a) {
		a->kind = DIFF_ARG_SCALAR;
		snprintf(a->name, sizeof a->name, "params");
		a->ordinal = -1;
		a->type = "";
	}
	return a;
}

/* Scalar (non-pointer) arguments.  Differences are appended to diff (when
 * not NULL) and unverifiable ones to unv.  Returns 1 all equal, 0 some
 * differ, -1 could not be checked (truncated parameters); -2 out of memory. */
static int compare_scalars(const struct tm_launch *la, const struct tm_launch *lb, const struct param_pair *pp,
			   struct arg_list *diff, struct arg_list *unv, size_t *nequal)
{
	const struct tm_kernel *k = la->look->kernel;
	int res = 1;
	if ((la->flags | lb->flags) & KTRACE_LAUNCHF_PARAMS_TRUNCATED) {
		if (unv) {
			struct diff_arg *a = params_arg(unv);
			if (!a)
				return -2;
			a->why = "parameter bytes were cut (layout unknown)";
		}
		return -1;
	}
	if (k->nparams == 0) {
		uint32_t len_a = la->look->param_bytes_len, len_b = lb->look->param_bytes_len;
		uint32_t n = len_a > len_b ? len_a : len_b;
		long d = bytes_differ(la, lb, pp, 0, n);
		if (d < 0 && len_a == len_b) {
			if (nequal && n)
				(*nequal)++;
			return 1;
		}
		if (diff) {
			struct diff_arg *a = params_arg(diff);
			if (!a)
				return -2;
			a->size = la->look->param_bytes_len;
			a->size_b = lb->look->param_bytes_len;
			a->va = pp->a;
			a->vb = pp->b;
			a->diff_at = d < 0 ? 0 : (uint32_t)d;
		}
		return 0;
	}
	for (uint32_t i = 0; i < k->nparams; i++) {
		const struct tm_param *p = &k->params[i];
		if (p->kind == KTRACE_PARAM_POINTER)
			continue; /* compared through its region */
		int out_of_range = (uint64_t)p->offset + p->size > la->look->param_bytes_len ||
				   (uint64_t)p->offset + p->size > lb->look->param_bytes_len;
		long d = out_of_range ? 0 : bytes_differ(la, lb, pp, p->offset, p->size);
		if (d < 0) {
			if (nequal)
				(*nequal)++;
			continue;
		}
		res = 0;
		if (!diff)
			break;
		struct diff_arg *a = arg_push(diff);
		if (!a)
			return -2;
		a->kind = DIFF_ARG_SCALAR;
		if (p->name[0])
			snprintf(a->name, sizeof a->name, "%s", p->name);
		else
			snprintf(a->name, sizeof a->name, "arg%u", (unsigned)p->ordinal);
		a->ordinal = p->ordinal;
		a->param_offset = p->offset;
		a->size = p->size;
		a->size_b = out_of_range ? 0 : p->size;
		a->type = p->type;
		a->va = out_of_range ? NULL : pp->a + p->offset;
		a->vb = out_of_range ? NULL : pp->b + p->offset;
		a->diff_at = (uint32_t)d;
	}
	return res;
}

int ktrace_diff_launch_affinity(const struct tm_trace *a, const struct tm_launch *la, const struct tm_trace *b,
				const struct tm_launch *lb)
{
	struct param_pair pieces = { ktrace_tm_param_bytes(la), ktrace_tm_param_bytes(lb) };
	int s = 0;
	if (compare_scalars(la, lb, &pieces, NULL, NULL, NULL) == 1)
		s += 1000;
	uint32_t i = 0, j = 0;
	while (i < la->look->nregions && j < lb->look->nregions) {
		const struct tm_region *x = &la->regions[i], *y = &lb->regions[j];
		if (ktrace_tm_region_key(x) < ktrace_tm_region_key(y)) {
			i++;
		} else if (ktrace_tm_region_key(x) > ktrace_tm_region_key(y)) {
			j++;
		} else {
			const char *why;
			int c = hash_cmp(a, x, b, y, 0, &why);
			s += c == H_EQ ? 10 : c == H_DIFF ? -10 : 0;
			i++;
			j++;
		}
	}
	if (la->look->kernel->module_digest && la->look->kernel->module_digest == lb->look->kernel->module_digest)
		s += 1;
	return s;
}

/* ---- stream order ---------------------------------------------------------------- */

int ktrace_diff_region_hashed(const struct tm_region *g)
{
	return g && (g->flags & KTRACE_REGIONF_PRE) && (g->flags & KTRACE_REGIONF_POST) &&
	       !(g->flags & KTRACE_REGIONF_UNHASHED);
}

static uint64_t region_key(const void *g)
{
	return ktrace_tm_region_key(g);
}

const struct tm_region *ktrace_diff_region_at_key(const struct tm_launch *l, uint64_t key)
{
	size_t i = ktrace_lower_bound(l->regions, l->look->nregions, sizeof *l->regions, key, region_key);

	return i < l->look->nregions && ktrace_tm_region_key(&l->regions[i]) == key ? &l->regions[i] : NULL;
}

struct writes_ctx {
	const struct tm_trace *other; /* the other run */
	const int32_t *match;            /* this run's launch -> the other's */
};

/* diff_order's question: does launch li of t write its region ri?  Its
 * digests changed in this run or its counterpart's in the other: yes; not
 * hashed and not declared read-only: maybe. */
static int region_writes(const struct tm_trace *t, size_t li, uint32_t ri, void *vctx)
{
	const struct writes_ctx *c = vctx;
	const struct tm_launch *l = &t->launches[li];
	const struct tm_region *g = &l->regions[ri];
	if (!ktrace_diff_region_hashed(g))
		return ktrace_diff_region_is_const(l->look->kernel, g) ? DIFF_ORDER_WRITES_NO : DIFF_ORDER_WRITES_MAYBE;
	if (g->pre_hash != g->post_hash)
		return DIFF_ORDER_WRITES_YES;
	const struct tm_region *h = c->match[li] >= 0 ? ktrace_diff_region_at_key(&c->other->launches[c->match[li]],
										  ktrace_tm_region_key(g)) : NULL;
	return ktrace_diff_region_hashed(h) && h->pre_hash != h->post_hash ? DIFF_ORDER_WRITES_YES : DIFF_ORDER_WRITES_NO;
}

/* Each run's happens-before relation, when it recorded ORDER records. */
static int build_orders(struct diff_result *r, const struct diff_align *al)
{
	struct writes_ctx ca = { r->b, al->match_a }, cb = { r->a, al->match_b };
	int oom_a, oom_b;
	r->order[0] = ktrace_diff_order_build(r->a, region_writes, &ca, &oom_a);
	r->order[1] = ktrace_diff_order_build(r->b, region_writes, &cb, &oom_b);
	r->order_a = r->order[0] != NULL;
	r->order_b = r->order[1] != NULL;
	return oom_a || oom_b ? -1 : 0;
}

void ktrace_diff_concurrent_fill(struct diff_concurrent *c, char run, const struct diff_order_writer *w)
{
	*c = (struct diff_concurrent){ .run = run, .launch = w->launch, .op = w->op, .seq = w->seq, .stream = w->stream };
	if (w->launch) {
		int ord;
		ktrace_diff_region_name(w->launch->look->kernel, &w->launch->regions[w->region], c->arg, sizeof c->arg, &ord);
	}
}

/* May an operation that can run concurrently with la (with lb) write bytes of
 * its region x (y)?  Then the pair's digests are no evidence; *c names the
 * writer (run A's first). */
static int set_aside(const struct diff_result *r, const struct tm_launch *la, const struct tm_launch *lb,
		     const struct tm_region *x, const struct tm_region *y, struct diff_concurrent *c)
{
	struct diff_order_writer w;
	if (!ktrace_diff_region_hashed(x) && !ktrace_diff_region_hashed(y))
		return 0; /* no digest to set aside: not evidence anyway */
	if (r->order[0] && x &&
	    ktrace_diff_order_concurrent_writer(r->order[0], (size_t)(la - r->a->launches), ktrace_tm_region_ptr(r->a, x),
						ktrace_tm_region_hash_len(r->a, x), &w)) {
		ktrace_diff_concurrent_fill(c, 'A', &w);
		return 1;
	}
	if (r->order[1] && y &&
	    ktrace_diff_order_concurrent_writer(r->order[1], (size_t)(lb - r->b->launches), ktrace_tm_region_ptr(r->b, y),
						ktrace_tm_region_hash_len(r->b, y), &w)) {
		ktrace_diff_concurrent_fill(c, 'B', &w);
		return 1;
	}
	return 0;
}

static void race_fill(struct diff_race *d, char run, const struct tm_trace *t, const struct diff_order_race *x)
{
	int ord;
	memset(d, 0, sizeof *d);
	d->run = run;
	d->first = &t->launches[x->first];
	d->second = &t->launches[x->second];
	d->region_first = x->region_first;
	d->region_second = x->region_second;
	ktrace_diff_region_name(d->first->look->kernel, &d->first->regions[x->region_first], d->arg_first, sizeof d->arg_first, &ord);
	ktrace_diff_region_name(d->second->look->kernel, &d->second->regions[x->region_second], d->arg_second, sizeof d->arg_second,
		    &ord);
	d->lo = x->lo;
	d->hi = x->hi;
}

/* Run B's race x is one of run A's listed (its launches' counterparts race
 * there): marks A's as in both and returns 1. */
static int race_in_a(struct diff_result *r, size_t na, const struct diff_align *al, const struct diff_order_race *x)
{
	long f = al->match_b[x->first], s = al->match_b[x->second];
	for (size_t i = 0; i < na && f >= 0 && s >= 0; i++) {
		size_t i1 = (size_t)(r->races[i].first - r->a->launches), i2 = (size_t)(r->races[i].second - r->a->launches);
		if ((i1 == (size_t)f && i2 == (size_t)s) || (i1 == (size_t)s && i2 == (size_t)f)) {
			r->races[i].in_both = 1;
			return 1;
		}
	}
	return 0;
}

/* The possible races of each run: A's listed, then B's that A does not list. */
static int collect_races(struct diff_result *r, const struct diff_align *al)
{
	struct diff_order_race v[DIFF_RACES_LISTED];
	size_t na = 0;
	r->races = calloc(2 * DIFF_RACES_LISTED, sizeof *r->races);
	if (!r->races)
		return -1;
	if (r->order[0]) {
		r->races_a = ktrace_diff_order_races(r->order[0], v, DIFF_RACES_LISTED);
		for (size_t i = 0; i < r->races_a && i < DIFF_RACES_LISTED; i++)
			race_fill(&r->races[r->nraces++], 'A', r->a, &v[i]);
		na = r->nraces;
	}
	if (r->order[1]) {
		r->races_b = ktrace_diff_order_races(r->order[1], v, DIFF_RACES_LISTED);
		for (size_t i = 0; i < r->races_b && i < DIFF_RACES_LISTED; i++)
			if (!race_in_a(r, na, al, &v[i]))
				race_fill(&r->races[r->nraces++], 'B', r->b, &v[i]);
	}
	return 0;
}

/* ---- launch comparison ---------------------------------------------------------- */

/* Walk the regions of both launches merged by their key (ktrace_tm_region_key). */
#define FOR_REGION_PAIRS(la, lb, x, y, body)                                                   \
	do {                                                                                   \
		uint32_t i_ = 0, j_ = 0;                                                       \
		while (i_ < (la)->look->nregions || j_ < (lb)->look->nregions) {                           \
			const struct tm_region *x = NULL, *y = NULL;                           \
			if (j_ >= (lb)->look->nregions ||                                            \
			    (i_ < (la)->look->nregions &&                                            \
			     ktrace_tm_region_key(&(la)->regions[i_]) <                        \
				     ktrace_tm_region_key(&(lb)->regions[j_])))                \
				x = &(la)->regions[i_++];                                      \
			else if (i_ >= (la)->look->nregions ||                                       \
				 ktrace_tm_region_key(&(lb)->regions[j_]) <                    \
					 ktrace_tm_region_key(&(la)->regions[i_]))             \
				y = &(lb)->regions[j_++];                                      \
			else {                                                                 \
				x = &(la)->regions[i_++];                                      \
				y = &(lb)->regions[j_++];                                      \
			}                                                                      \
			body                                                                   \
		}                                                                              \
	} while (0)

/* A pair of regions with a pointer found by its value alone and none typed
 * (docs/format.md "Pointer words"): when it cannot be compared it costs
 * itself only.  Regions of traces before 1.3 are never guessed. */
static int pair_guessed(const struct tm_region *x, const struct tm_region *y)
{
	return (!x || (x->flags & KTRACE_REGIONF_GUESSED)) && (!y || (y->flags & KTRACE_REGIONF_GUESSED));
}

/* Why the typed pair x, y of la, lb could not be compared (enum ktrace_unv),
 * and the run it comes from ('A', 'B', 0 both). */
static int pair_reason(const struct diff_result *res, const struct tm_launch *la, const struct tm_launch *lb,
		       const struct tm_region *x, const struct tm_region *y, char *run)
{
	uint32_t ma, mb;
	uint64_t len_x, len_y;

	*run = 0;
	if (!x || !y) {
		*run = x ? 'A' : 'B';
		return KTRACE_UNV_REGIONS_DIFFER;
	}
	len_x = ktrace_tm_region_hash_len(res->a, x);
	len_y = ktrace_tm_region_hash_len(res->b, y);
	ma = ktrace_unv_launch_mask(la->flags, la->look->hash_skip, la->look->nregions) |
	     ktrace_unv_region_mask(la->flags, x->flags, len_x);
	mb = ktrace_unv_launch_mask(lb->flags, lb->look->hash_skip, lb->look->nregions) |
	     ktrace_unv_region_mask(lb->flags, y->flags, len_y);
	if (ma | mb) {
		int r = ktrace_unv_first(ma | mb);

		*run = (ma & mb & (1u << r)) ? 0 : (ma & (1u << r)) ? 'A' : 'B';
		return r;
	}
	return len_x != len_y ? KTRACE_UNV_EXTENTS_DIFFER : KTRACE_UNV_HASH_MISSING;
}

/* Note reason r (from run `run`, the region at `off`) for the launch. */
static void unv_note(struct diff_unverified *u, int r, char run, int have_off, uint32_t off)
{
	if (!(u->reasons & (1u << r)) && (!u->reason || r < u->reason)) {
		u->reason = r;
		u->run = run;
		u->noffsets = 0;
	}
	u->reasons |= 1u << r;
	if (r != u->reason || !have_off || !ktrace_unv_is_regional(r))
		return;
	if (u->noffsets < DIFF_UNV_OFFSETS) {
		u->offset[u->noffsets] = off;
		u->offset_run[u->noffsets] = run;
	}
	u->noffsets++;
	if (u->run != run)
		u->run = 0;
}

/* The reasons the two records give before their regions are paired:
 * parameter bytes cut, hashing skipped. */
static void launch_reasons(const struct tm_launch *la, const struct tm_launch *lb, struct diff_unverified *u)
{
	uint32_t keep = (1u << KTRACE_UNV_PARAMS_TRUNCATED) | (1u << KTRACE_UNV_HASH_CAPTURE) |
			(1u << KTRACE_UNV_HASH_NOSLOT) | (1u << KTRACE_UNV_HASH_SKIPPED);
	uint32_t ma = ktrace_unv_launch_mask(la->flags, la->look->hash_skip, la->look->nregions) & keep;
	uint32_t mb = ktrace_unv_launch_mask(lb->flags, lb->look->hash_skip, lb->look->nregions) & keep;

	for (int r = 1; r < KTRACE_UNV_COUNT; r++)
		if ((ma | mb) & (1u << r))
			unv_note(u, r, (ma & mb & (1u << r)) ? 0 : (ma & (1u << r)) ? 'A' : 'B', 0, 0);
}

/* A graph launch's node skipped by hashing: why its graph was not hashed,
 * from the GRAPH record of its revision (run A's, else B's). */
static uint32_t graph_untraced_of(const struct diff_result *res, const struct tm_launch *la,
				  const struct tm_launch *lb)
{
	const struct tm_trace *t[2] = { res->a, res->b };
	const struct tm_launch *l[2] = { la, lb };

	for (int k = 0; k < 2; k++) {
		const struct tm_graph *g;
		if (!t[k] || !(l[k]->flags & KTRACE_LAUNCHF_GRAPH) || !(l[k]->flags & KTRACE_LAUNCHF_HASH_SKIPPED))
			continue;
		g = ktrace_tm_graph(t[k], ktrace_tm_graph_ref(l[k])->exec_id, ktrace_tm_graph_ref(l[k])->revision);
		if (g && g->untraced)
			return g->untraced;
	}
	return 0;
}

/* How a matched pair compares; an unverified one says why in *u. */
static int launch_status(struct diff_result *res, const struct tm_launch *la, const struct tm_launch *lb,
			 struct diff_unverified *u)
{
	int diverged = 0;
	struct diff_concurrent cw;

	memset(u, 0, sizeof *u);
	u->la = la;
	u->lb = lb;
	launch_reasons(la, lb, u);
	if (u->reasons & (1u << KTRACE_UNV_HASH_SKIPPED))
		u->graph_untraced = graph_untraced_of(res, la, lb);
	FOR_REGION_PAIRS(la, lb, x, y, {
		const char *why;
		const struct tm_region *r = x ? x : y;
		const struct tm_kernel *k = x ? la->look->kernel : lb->look->kernel;
		int guessed = pair_guessed(x, y);
		if ((res->order[0] || res->order[1]) && set_aside(res, la, lb, x, y, &cw)) {
			/* no evidence either way; as an output, it leaves the launch unverified */
			res->set_aside++;
			if ((region_written(x) || region_written(y)) && !guessed)
				unv_note(u, KTRACE_UNV_CONCURRENT, cw.run, 1, r->param_offset);
			continue;
		}
		int c = output_differs(res, x, y, &why);
		if (c == H_DIFF) {
			diverged = 1;
		} else if (c == H_UNV && guessed) {
			res->guessed_set_aside++;
		} else if (c == H_UNV && !(ktrace_diff_region_is_const(k, r) && x && y)) {
			/* a read-only argument cannot change: its missing post-hash hides nothing */
			char run;
			int why_code = pair_reason(res, la, lb, x, y, &run);
			unv_note(u, why_code, run, 1, r->param_offset);
		}
	});
	return diverged ? DIFF_DIVERGED : u->reasons ? DIFF_UNVERIFIED : DIFF_EQUAL;
}

/* ---- last writer ------------------------------------------------------------------- */

static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	if (!alen)
		alen = 1;
	if (!blen)
		blen = 1;
	uint64_t aend = a + alen < a ? UINT64_MAX : a + alen;
	uint64_t bend = b + blen < b ? UINT64_MAX : b + blen;
	return a < bend && b < aend;
}

static int copy_writes_device(const struct tm_op *o)
{
	if (o->result != 0)
		return 0;
	if (o->type == TM_OP_MEMSET)
		return 1;
	return o->dir == KTRACE_COPY_HTOD || o->dir == KTRACE_COPY_DTOD || o->dir == KTRACE_COPY_PEER ||
	       o->dir == KTRACE_COPY_UNKNOWN;
}

void ktrace_diff_last_writer(const struct tm_trace *t, const int32_t *match, size_t li, uint64_t addr, uint64_t len,
			     struct diff_writer *w)
{
	memset(w, 0, sizeof *w);
	w->type = DIFF_WRITER_NONE;
	uint64_t before = t->launches[li].seq;
	long i = (long)li - 1;
	long o = (long)ktrace_tm_op_lower_bound(t, before) - 1;
	while (i >= 0 || o >= 0) {
		int take_launch = o < 0 || (i >= 0 && t->launches[i].seq > t->ops[o].seq);
		if (!take_launch) {
			const struct tm_op *op = &t->ops[o--];
			if (copy_writes_device(op) && overlaps(op->dst, op->bytes, addr, len)) {
				w->type = op->type == TM_OP_MEMCPY ? DIFF_WRITER_MEMCPY : DIFF_WRITER_MEMSET;
				w->seq = op->seq;
				w->op = op;
				return;
			}
			continue;
		}
		const struct tm_launch *l = &t->launches[i];
		long idx = i--;
		if (l->flags & KTRACE_LAUNCHF_FAILED)
			continue;
		for (uint32_t r = 0; r < l->look->nregions; r++) {
			const struct tm_region *g = &l->regions[r];
			const struct tm_extent *e = ktrace_tm_region_extent(t, g);
			if (!overlaps(e->ptr, e->hash_len, addr, len))
				continue;
			int hashed = (g->flags & KTRACE_REGIONF_PRE) && (g->flags & KTRACE_REGIONF_POST) &&
				     !(g->flags & KTRACE_REGIONF_UNHASHED);
			int changed = hashed && g->pre_hash != g->post_hash;
			int maybe = !hashed && !ktrace_diff_region_is_const(l->look->kernel, g);
			if (!changed && !maybe)
				continue;
			w->type = changed ? DIFF_WRITER_LAUNCH : DIFF_WRITER_LAUNCH_UNHASHED;
			w->seq = l->seq;
			w->launch = l;
			w->only_here = match[idx] < 0;
			int ord;
			ktrace_diff_region_name(l->look->kernel, g, w->arg, sizeof w->arg, &ord);
			return;
		}
	}
}

/* ---- classification ---------------------------------------------------------------- */

/* Append a pointer argument (regions x in A, y in B; r is whichever exists). */
static struct diff_arg *push_pointer_arg(const struct diff_result *res, struct arg_list *l, const char *name, int ord,
					 const struct tm_region *r, const struct tm_region *x, const struct tm_region *y)
{
	struct diff_arg *a = arg_push(l);
	if (!a)
		return NULL;
	a->kind = DIFF_ARG_POINTER;
	snprintf(a->name, sizeof a->name, "%s", name);
	a->ordinal = ord;
	a->param_offset = r->param_offset;
	a->ra = x;
	a->rb = y;
	a->hash_len_a = x ? ktrace_tm_region_hash_len(res->a, x) : 0;
	a->hash_len_b = y ? ktrace_tm_region_hash_len(res->b, y) : 0;
	return a;
}

/* An 8-byte value in the range where x86-64 Linux puts heap, mmap and stack
 * addresses: a host pointer passed by value (a C++ reference to a host
 * functor, say) differs between runs by ASLR and means nothing to the GPU. */
static int looks_like_host_address(const uint8_t *v)
{
	uint64_t x = 0;
	for (int i = 7; i >= 0; i--)
		x = x << 8 | v[i];
	return x >= 0x550000000000ull && x < 0x800000000000ull;
}

static int is_host_noise(const struct diff_arg *a)
{
	if (a->kind != DIFF_ARG_SCALAR || !a->va || !a->vb || a->size != a->size_b)
		return 0;
	if (a->size > 8)
		return 1; /* by-value struct: its pointer words are compared as regions */
	return a->size == 8 && looks_like_host_address(a->va) && looks_like_host_address(a->vb);
}

/* When no buffer input differs, move by-value differences that look
 * host-side (is_host_noise) from ins to noise: with identical buffers the
 * kernel is then judged non-deterministic, and the report lists them.  Real
 * scalar differences (a learning rate, a size) stay inputs. */
static int separate_host_noise(struct arg_list *ins, struct arg_list *noise)
{
	for (size_t i = 0; i < ins->n; i++)
		if (ins->v[i].kind == DIFF_ARG_POINTER)
			return 0;
	size_t keep = 0;
	for (size_t i = 0; i < ins->n; i++) {
		if (is_host_noise(&ins->v[i])) {
			struct diff_arg *a = arg_push(noise);
			if (!a)
				return -1;
			*a = ins->v[i];
		} else {
			ins->v[keep++] = ins->v[i];
		}
	}
	ins->n = keep;
	return 0;
}

/* An input whose digests matched up to its cut: not compared, with the
 * launch of each run that may have written past the cut.  0, or -1 (out of memory). */
static int cut_input(const struct diff_result *res, const struct diff_align *al, struct arg_list *unv,
		     const char *name, int ord, const struct tm_region *r, const struct tm_region *x,
		     const struct tm_region *y, size_t ia, size_t ib)
{
	struct diff_arg *a = push_pointer_arg(res, unv, name, ord, r, x, y);
	enum diff_cut_tail ex, ey;
	uint64_t tx = ktrace_diff_cut_tail(res->a, &res->a->launches[ia], x, &ex);
	uint64_t ty = ktrace_diff_cut_tail(res->b, &res->b->launches[ib], y, &ey);

	if (!a)
		return -1;
	a->why = "unverified: hashed only up to KTRACE_HASH_MAX (cut); the bytes after the cut were not compared";
	a->cut = 1;
	/* the larger tail of the two runs; unknown when either run's is
	 * (a run with only one of the regions cut has the other's UNKNOWN
	 * only when that one is cut) */
	if ((x && ktrace_diff_region_cut(res->a, x) && ex == DIFF_CUT_TAIL_UNKNOWN) ||
	    (y && ktrace_diff_region_cut(res->b, y) && ey == DIFF_CUT_TAIL_UNKNOWN)) {
		a->cut_tail_kind = DIFF_CUT_TAIL_UNKNOWN;
		a->cut_tail = 0;
	} else {
		a->cut_tail = tx > ty ? tx : ty;
		a->cut_tail_kind = tx > ty ? ex : ey;
	}
	ktrace_diff_cut_writer(res->a, al->match_a, ia, x, &a->wa);
	ktrace_diff_cut_writer(res->b, al->match_b, ib, y, &a->wb);
	return 0;
}

/* Launch l's own parameter bytes (of trace t): its piece's, or a copy
 * kept in *keep (freed with the result); NULL when memory runs out. */
static const uint8_t *own_params(const struct tm_trace *t, const struct tm_launch *l, uint8_t **keep)
{
	if (!l->look->params_patched)
		return ktrace_tm_param_bytes(l);
	free(*keep);
	*keep = malloc(l->look->param_bytes_len ? l->look->param_bytes_len : 1);
	return *keep ? ktrace_tm_params(t, l, *keep) : NULL;
}

static int classify(struct diff_result *res, const struct diff_align *al, struct diff_divergence *d)
{
	const struct tm_launch *la = d->la, *lb = d->lb;
	struct arg_list outs = { 0 }, ins = { 0 }, unv = { 0 }, noise = { 0 };
	size_t ia = (size_t)(la - res->a->launches), ib = (size_t)(lb - res->b->launches);
	int rc = -1;
	struct param_pair pp = { own_params(res->a, la, &d->params_a), own_params(res->b, lb, &d->params_b) };
	if (!pp.a || !pp.b || compare_scalars(la, lb, &pp, &ins, &unv, &d->equal_scalars) == -2)
		goto out;
	FOR_REGION_PAIRS(la, lb, x, y, {
		const char *why = NULL;
		const struct tm_region *r = x ? x : y;
		const struct tm_kernel *k = x ? la->look->kernel : lb->look->kernel;
		char name[96];
		int ord;
		struct diff_concurrent cw;
		ktrace_diff_region_name(k, r, name, sizeof name, &ord);
		if ((res->order[0] || res->order[1]) && set_aside(res, la, lb, x, y, &cw)) {
			struct diff_arg *sa = push_pointer_arg(res, &unv, name, ord, r, x, y);
			if (!sa)
				goto out;
			sa->why = "unverified: concurrent writer";
			sa->concurrent = cw;
			continue;
		}
		int post = output_differs(res, x, y, &why);
		if (post == H_DIFF && !push_pointer_arg(res, &outs, name, ord, r, x, y))
			goto out;
		int pre = hash_cmp(res->a, x, res->b, y, 0, &why);
		if (pre == H_EQ && (ktrace_diff_region_cut(res->a, x) || ktrace_diff_region_cut(res->b, y))) {
			/* equal up to the cut: the bytes after it are unknown (diff_cut.c) */
			if (cut_input(res, al, &unv, name, ord, r, x, y, ia, ib))
				goto out;
			continue;
		}
		if (pre == H_EQ) {
			d->equal_pointers++;
			d->equal_carried += ((x->flags | y->flags) & KTRACE_REGIONF_PRE_CARRIED) != 0;
			continue;
		}
		if (pre == H_UNV && pair_guessed(x, y)) {
			d->guessed_inputs++; /* a word that only looked like a pointer, maybe */
			continue;
		}
		struct diff_arg *a = push_pointer_arg(res, pre == H_DIFF ? &ins : &unv, name, ord, r, x, y);
		if (!a)
			goto out;
		a->why = why;
		if (pre == H_DIFF) {
			const struct tm_extent *ex = ktrace_tm_region_extent(res->a, x);
			const struct tm_extent *ey = ktrace_tm_region_extent(res->b, y);

			ktrace_diff_last_writer(res->a, al->match_a, ia, ex->ptr, ex->hash_len, &a->wa);
			ktrace_diff_last_writer(res->b, al->match_b, ib, ey->ptr, ey->hash_len, &a->wb);
		}
	});
	if (separate_host_noise(&ins, &noise) < 0)
		goto out;
	d->host_noise = noise.v;
	d->nhost_noise = noise.n;
	d->outputs = outs.v;
	d->noutputs = outs.n;
	d->inputs = ins.v;
	d->ninputs = ins.n;
	d->unverified = unv.v;
	d->nunverified = unv.n;
	d->cls = ins.n ? DIFF_CLASS_INPUTS_DIFFER : unv.n ? DIFF_CLASS_INPUTS_UNVERIFIED : DIFF_CLASS_KERNEL_NONDET;
	return 0;
out:
	free(outs.v);
	free(ins.v);
	free(unv.v);
	free(noise.v);
	return rc;
}

/* ---- per-kernel summary -------------------------------------------------------------- */

struct kernel_table {
	struct diff_kernel_stat *v;
	size_t n, cap;
	long *tab;
	size_t tabcap;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t kernel_hash_at(const void *ctx, size_t i)
{
	return str_hash(((const struct kernel_table *)ctx)->v[i].name);
}

static struct diff_kernel_stat *kernel_stat_of(struct kernel_table *kt, const char *name)
{
	if (kt->n * 2 >= kt->tabcap &&
	    ktrace_diff_rehash(&kt->tab, &kt->tabcap, kt->tabcap ? kt->tabcap * 2 : 64, kt->n, kernel_hash_at, kt))
		return NULL;
	size_t p = str_hash(name) & (kt->tabcap - 1);
	while (kt->tab[p] >= 0) {
		if (!strcmp(kt->v[kt->tab[p]].name, name))
			return &kt->v[kt->tab[p]];
		p = (p + 1) & (kt->tabcap - 1);
	}
	if (ktrace_grow(&kt->v, &kt->cap, kt->n + 1, sizeof *kt->v))
		return NULL;
	struct diff_kernel_stat *s = &kt->v[kt->n];
	memset(s, 0, sizeof *s);
	s->name = name;
	s->first_seq_a = UINT64_MAX;
	kt->tab[p] = (long)kt->n++;
	return s;
}

/* ---- warnings ------------------------------------------------------------------------ */

static int warn(struct diff_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int warn(struct diff_result *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	char **nw = realloc(r->warnings, (r->nwarnings + 1) * sizeof *nw);
	if (!nw)
		return -1;
	r->warnings = nw;
	r->warnings[r->nwarnings] = strdup(buf);
	if (!r->warnings[r->nwarnings])
		return -1;
	r->nwarnings++;
	return 0;
}

static int trace_warnings(struct diff_result *r, const struct tm_trace *t, const char *run)
{
	int rc = 0;
	if (t->truncated)
		rc |= warn(r, "run %s: %s; compared up to the last complete record", run, t->truncated_msg);
	else if (!t->have_end)
		rc |= warn(r, "run %s: the trace has no END record (the process did not finish cleanly)", run);
	uint64_t v = t->counters[KTRACE_CTR_RECORDS_DROPPED];
	if (v)
		rc |= warn(r, "run %s: %" PRIu64 " record%s dropped by the writer", run, v, v == 1 ? " was" : "s were");
	uint64_t skipped = t->counters[KTRACE_CTR_HASH_SKIPPED_CAPTURE] + t->counters[KTRACE_CTR_HASH_SKIPPED_NOSLOT] +
			   t->counters[KTRACE_CTR_HASH_SKIPPED_ERROR];
	if (skipped)
		rc |= warn(r, "run %s: %" PRIu64 " launch%s not hashed (graph capture, no free slot or error)", run,
			   skipped, skipped == 1 ? " was" : "es were");
	if (t->counters[KTRACE_CTR_HASH_INCOMPLETE])
		rc |= warn(r, "run %s: %" PRIu64 " hash result%s never arrived", run,
			   t->counters[KTRACE_CTR_HASH_INCOMPLETE], t->counters[KTRACE_CTR_HASH_INCOMPLETE] == 1 ? "" : "s");
	if (t->counters[KTRACE_CTR_LAUNCHES_FILTERED])
		rc |= warn(r, "run %s: %" PRIu64 " launch%s filtered out (KTRACE_KERNELS / KTRACE_LAUNCHES)", run,
			   t->counters[KTRACE_CTR_LAUNCHES_FILTERED],
			   t->counters[KTRACE_CTR_LAUNCHES_FILTERED] == 1 ? " was" : "es were");
	size_t hashed = 0;
	for (size_t i = 0; i < t->nlaunches; i++)
		if (t->launches[i].flags & KTRACE_LAUNCHF_HASHED)
			hashed++;
	if (t->nlaunches && !hashed)
		rc |= warn(r, "run %s: no launch was hashed (hashing off?): outputs cannot be compared", run);
	size_t shown = 0;
	for (size_t i = 0; i < t->nnotes && shown < 8; i++) {
		const struct tm_note *n = &t->notes[i];
		if (n->level == KTRACE_NOTE_INFO)
			continue;
		int dup = 0;
		for (size_t j = 0; j < i && !dup; j++)
			dup = t->notes[j].level == n->level && !strcmp(t->notes[j].text, n->text);
		if (dup)
			continue;
		rc |= warn(r, "run %s: %s: %s", run,
			   n->level == KTRACE_NOTE_DISABLED ? "disabled" : n->level == KTRACE_NOTE_ERROR ? "error" : "warning",
			   n->text);
		shown++;
	}
	return rc;
}

/* What the runs say of stream order, once: not recorded (traces older
 * than 1.2), or recorded in one run only. */
static int order_warnings(struct diff_result *r)
{
	uint16_t minor = r->a->format_minor < r->b->format_minor ? r->a->format_minor : r->b->format_minor;
	if (!r->order_a && !r->order_b && minor < 2)
		return warn(r, "stream order was not recorded (format 1.%u trace; ORDER records came with 1.2): each "
			       "launch's digests are taken as evidence whatever ran on other streams", minor);
	if (r->order_a != r->order_b)
		return warn(r, "stream order was recorded in run %s only: run %s's digests are taken as evidence "
			       "whatever ran on other streams", r->order_a ? "A" : "B", r->order_a ? "B" : "A");
	return 0;
}

/* ---- the comparison ------------------------------------------------------------------- */

/* A new divergence of the matched pair la (launch i of A) and lb, counted
 * for its kernel ks.  *cap is the capacity of r->divs. */
static int add_divergence(struct diff_result *r, size_t *cap, const struct diff_align *al, size_t i,
			  const struct tm_launch *la, const struct tm_launch *lb, struct diff_kernel_stat *ks)
{
	if (ktrace_grow(&r->divs, cap, r->ndivs + 1, sizeof *r->divs))
		return -1;
	struct diff_divergence *d = &r->divs[r->ndivs];
	memset(d, 0, sizeof *d);
	d->la = la;
	d->lb = lb;
	d->device = la->look->device;
	d->stream = al->stream_a[i];
	d->unverified_before = r->unverified;
	d->only_a_before = r->only_a;
	if (ks->first_seq_a == UINT64_MAX) {
		ks->first_seq_a = la->seq;
		ks->first_div = r->ndivs;
	}
	r->ndivs++;
	return 0;
}

/* Every launch of A: matched (equal, diverged or unverified) or in A only. */
/* Keep u, an unverified launch, and count it by its main reason. */
static int add_unverified(struct diff_result *r, size_t *cap, const struct diff_unverified *u)
{
	if (ktrace_grow(&r->unv, cap, r->nunv + 1, sizeof *r->unv))
		return -1;
	r->unv[r->nunv++] = *u;
	r->unverified++;
	r->unverified_by[u->reason]++;
	return 0;
}

static int compare_launches_of_a(struct diff_result *r, const struct diff_align *al, struct kernel_table *kt)
{
	const struct tm_trace *a = r->a, *b = r->b;
	size_t cap = 0, ucap = 0;
	for (size_t i = 0; i < a->nlaunches; i++) {
		const struct tm_launch *la = &a->launches[i];
		struct diff_kernel_stat *ks = kernel_stat_of(kt, ktrace_tm_kernel_name(la->look->kernel));
		if (!ks)
			return -1;
		if (al->match_a[i] < 0) {
			if (!r->only_a++)
				r->first_only_a = la;
			ks->only_a++;
			continue;
		}
		const struct tm_launch *lb = &b->launches[al->match_a[i]];
		r->matched++;
		ks->matched++;
		struct diff_unverified u;
		int st = launch_status(r, la, lb, &u);
		if (st == DIFF_UNVERIFIED) {
			if (add_unverified(r, &ucap, &u))
				return -1;
			ks->unverified++;
		} else if (st == DIFF_DIVERGED) {
			r->diverged++;
			ks->diverged++;
			if (add_divergence(r, &cap, al, i, la, lb, ks))
				return -1;
		}
	}
	return 0;
}

/* The launches of B that A has no match for. */
static int count_launches_of_b_only(struct diff_result *r, const struct diff_align *al, struct kernel_table *kt)
{
	const struct tm_trace *b = r->b;
	for (size_t j = 0; j < b->nlaunches; j++) {
		if (al->match_b[j] >= 0)
			continue;
		struct diff_kernel_stat *ks = kernel_stat_of(kt, ktrace_tm_kernel_name(b->launches[j].look->kernel));
		if (!ks)
			return -1;
		if (!r->only_b++)
			r->first_only_b = &b->launches[j];
		ks->only_b++;
	}
	return 0;
}

/* Classify the first divergence, or all of them, and the first of each kernel. */
static int classify_divergences(struct diff_result *r, const struct diff_align *al, const struct diff_opts *o)
{
	for (size_t i = 0; i < r->ndivs; i++) {
		int want = o->all || i == 0;
		if (want && classify(r, al, &r->divs[i]) != 0)
			return -1;
	}
	if (o->all)
		return 0;
	for (size_t k = 0; k < r->nkernels; k++) {
		struct diff_kernel_stat *ks = &r->kernels[k];
		if (ks->first_seq_a != UINT64_MAX && !r->divs[ks->first_div].cls &&
		    classify(r, al, &r->divs[ks->first_div]) != 0)
			return -1;
	}
	return 0;
}

/* Align a and b for r (r->priv holds the alignment).  Returns it, or NULL with err. */
static struct diff_align *align_traces(struct diff_result *r, char *err, size_t errlen)
{
	const struct tm_trace *a = r->a, *b = r->b;
	if (a->digest_alg != b->digest_alg) {
		snprintf(err, errlen, "%s and %s use different digest algorithms (%u and %u): hashes cannot be compared",
			 a->path, b->path, a->digest_alg, b->digest_alg);
		return NULL;
	}
	struct diff_align *al = calloc(1, sizeof *al);
	if (!al || ktrace_diff_align(a, b, al) != 0) {
		free(al);
		snprintf(err, errlen, "out of memory while aligning %s and %s", a->path, b->path);
		return NULL;
	}
	r->priv = al;
	r->streams = al->streams;
	r->nstreams = al->nstreams;
	return al;
}

/* What --strict counts as a failure besides divergences: launches in one
 * run only, unverified launches, possible races, graphs not traced in full. */
static int strict_failure(const struct diff_result *r)
{
	return r->only_a || r->only_b || r->unverified || r->races_a || r->races_b || r->graphs_a.untraced ||
	       r->graphs_b.untraced || r->body_runs.unknown;
}

int ktrace_diff_compare(const struct tm_trace *a, const struct tm_trace *b, const struct diff_opts *o,
			struct diff_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->a = a;
	r->b = b;
	r->label_a = o->label_a ? o->label_a : a->path;
	r->label_b = o->label_b ? o->label_b : b->path;
	struct diff_align *al = align_traces(r, err, errlen);
	struct kernel_table kt = { 0 };
	if (!al)
		return -1;
	r->launches_a = a->nlaunches;
	r->launches_b = b->nlaunches;
	if (build_orders(r, al) || compare_launches_of_a(r, al, &kt) || count_launches_of_b_only(r, al, &kt) ||
	    collect_races(r, al))
		goto oom;
	free(kt.tab);
	kt.tab = NULL;
	r->kernels = kt.v;
	r->nkernels = kt.n;
	kt.v = NULL;
	ktrace_diff_count_extents(a, &r->extents_a);
	ktrace_diff_count_extents(b, &r->extents_b);
	ktrace_diff_count_graphs(a, &r->graphs_a);
	ktrace_diff_count_graphs(b, &r->graphs_b);
	if (ktrace_diff_compare_results(a, b, r->streams, r->nstreams, &r->results) ||
	    ktrace_diff_compare_body_runs(a, b, &r->body_runs))
		goto oom;
	if (classify_divergences(r, al, o) || ktrace_diff_mark_cut_writers(r, al->match_a) ||
	    ktrace_diff_rw_races(r, al->match_a) ||
	    trace_warnings(r, a, "A") || trace_warnings(r, b, "B") || order_warnings(r))
		goto oom;
	r->strict = o->strict;
	r->status = r->diverged ? 1 : 0;
	if (o->strict && strict_failure(r))
		r->status = 1;
	if (!ktrace_diff_compared(r))
		r->status = 2; /* nothing compared: never a pass */
	if (r->results.state == DIFF_RESULTS_DIFFER || r->body_runs.differ)
		r->status = 1; /* what the program observed, or a loop's count, differs, whatever the kernels say */
	return 0;
oom:
	free(kt.tab);
	free(kt.v);
	ktrace_diff_result_free(r);
	snprintf(err, errlen, "out of memory while comparing %s and %s", a->path, b->path);
	return -1;
}

int ktrace_diff_status_besides_divergences(const struct diff_result *r)
{
	if (r->results.state == DIFF_RESULTS_DIFFER || r->body_runs.differ)
		return 1;
	if (!ktrace_diff_compared(r))
		return 2;
	return r->strict && strict_failure(r) ? 1 : 0;
}

void ktrace_diff_result_free(struct diff_result *r)
{
	for (size_t i = 0; i < r->ndivs; i++) {
		free(r->divs[i].outputs);
		free(r->divs[i].inputs);
		free(r->divs[i].host_noise);
		free(r->divs[i].unverified);
		free(r->divs[i].params_a);
		free(r->divs[i].params_b);
	}
	free(r->divs);
	free(r->unv);
	free(r->kernels);
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	free(r->races);
	free(r->rw);
	ktrace_diff_order_free(r->order[0]);
	ktrace_diff_order_free(r->order[1]);
	if (r->priv) {
		ktrace_diff_align_free(r->priv);
		free(r->priv);
	}
	memset(r, 0, sizeof *r);
}
