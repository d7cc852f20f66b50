/* tools/diff/diff_rwrace.c: read/write races, and the race that explains the
 * first divergence.
 *
 * Owns the read/write races of a comparison: a launch that reads bytes of a
 * region (its digests unchanged in both runs, or the parameter declared
 * read-only; when they changed, a concurrent writer alone can explain it, so
 * it "reads or writes" them) while a launch, copy or memset that nothing orders with it (no
 * stream order, event, host sync or graph edge: diff_order.c) may write
 * them, found in both runs, both extents known (exact or from the kernel's
 * source: an inferred extent may cover a neighbour's bytes).  The first divergence is explained by a race
 * when it is such a reader (its input was set aside for that writer), or,
 * once replays in isolation did not reproduce it, when it read or wrote
 * bytes a write/write race of both runs wrote last (the race's own regions
 * and its region there all certain); the verdict is then "race"
 * (diff_confirm.c).  Reads the engine's result and the runs' order.
 */
#include "tools/diff/diff_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/ktrace_format.h"
#include "tools/diff/diff_order.h"

/* g's extent is known, not guessed: bounded by its own allocation (EXACT)
 * or by its kernel's source (SIGNATURE).  An inferred extent may reach
 * into a neighbour's bytes the launch never touches, so it accuses nobody. */
static int certain(const struct tm_region *g)
{
	return g && (g->flags & (KTRACE_REGIONF_EXACT | KTRACE_REGIONF_SIGNATURE));
}

/* Region x of a launch of A (y its counterpart) can be judged: in both runs,
 * hashed or at least located, its extent certain in both.  A word found by
 * its value alone counts only when both runs have it with such an extent. */
static int judged(const struct diff_result *r, const struct tm_region *x, const struct tm_region *y)
{
	return y && ktrace_tm_region_hash_len(r->a, x) && ktrace_tm_region_hash_len(r->b, y) && certain(x) &&
	       certain(y);
}

/* l reads x without writing it: unchanged in both runs, or read-only by its
 * type.  Otherwise its digests changed, which a concurrent writer alone can
 * explain: it reads or writes the bytes. */
static int reads_only(const struct tm_launch *l, const struct tm_region *x, const struct tm_region *y)
{
	if (ktrace_diff_region_is_const(l->look->kernel, x))
		return 1;
	return ktrace_diff_region_hashed(x) && ktrace_diff_region_hashed(y) && x->pre_hash == x->post_hash && y->pre_hash == y->post_hash;
}

/* The bytes the writer w (of run t) may write: its region, or the copy's or memset's destination. */
static void writer_range(const struct tm_trace *t, const struct diff_order_writer *w, uint64_t *lo, uint64_t *hi)
{
	if (w->launch) {
		const struct tm_extent *e = ktrace_tm_region_extent(t, &w->launch->regions[w->region]);
		*lo = e->ptr;
		*hi = e->ptr + (e->hash_len ? e->hash_len : 1);
	} else {
		*lo = w->op->dst;
		*hi = w->op->dst + (w->op->bytes ? w->op->bytes : 1);
	}
}

static int same_graph_launch(const struct tm_launch *a, const struct tm_launch *b)
{
	return a && b && (a->flags & KTRACE_LAUNCHF_GRAPH) && (b->flags & KTRACE_LAUNCHF_GRAPH) &&
	       ktrace_tm_graph_ref(a)->exec_id == ktrace_tm_graph_ref(b)->exec_id &&
	       ktrace_tm_graph_ref(a)->launch_seq == ktrace_tm_graph_ref(b)->launch_seq;
}

/* Keep race x (the first DIFF_RACES_LISTED, and the one of the first divergence). */
static int keep(struct diff_result *r, const struct diff_rw_race *x, int first_div)
{
	if (r->nrw >= DIFF_RACES_LISTED && !(first_div && !r->race_first))
		return 0;
	if (!r->rw) {
		r->rw = calloc(DIFF_RACES_LISTED + 1, sizeof *r->rw);
		if (!r->rw)
			return -1;
	}
	r->rw[r->nrw] = *x;
	if (first_div && !r->race_first)
		r->race_first = &r->rw[r->nrw];
	r->nrw++;
	return 0;
}

/* The read/write race of launch i of A (lb its match; first_div: the first
 * divergence) over its region x, if both runs have one: 1 with *out filled. */
static int race_of(struct diff_result *r, size_t i, const struct tm_launch *lb, const struct tm_region *x,
		   int first_div, struct diff_rw_race *out)
{
	const struct tm_launch *la = &r->a->launches[i];
	const struct tm_region *y = ktrace_diff_region_at_key(lb, ktrace_tm_region_key(x));
	struct diff_order_writer wa, wb;
	uint64_t lo, hi;
	int ord;

	if (!judged(r, x, y))
		return 0;
	const struct tm_extent *ex = ktrace_tm_region_extent(r->a, x), *ey = ktrace_tm_region_extent(r->b, y);
	if (!ktrace_diff_order_concurrent_writer(r->order[0], i, ex->ptr, ex->hash_len, &wa) ||
	    !ktrace_diff_order_concurrent_writer(r->order[1], (size_t)(lb - r->b->launches), ey->ptr, ey->hash_len, &wb))
		return 0;
	if ((wa.launch && !certain(&wa.launch->regions[wa.region])) ||
	    (wb.launch && !certain(&wb.launch->regions[wb.region])))
		return 0;
	/* two launches that both change the bytes are a write/write race (listed
	 * as such), unless one is the first divergence: its digests may have
	 * changed only because the other wrote while it ran */
	if (!reads_only(la, x, y) && wa.launch && !first_div)
		return 0;
	memset(out, 0, sizeof *out);
	out->writes_too = !reads_only(la, x, y);
	out->reader = la;
	out->reader_b = lb;
	ktrace_diff_region_name(la->look->kernel, x, out->arg, sizeof out->arg, &ord);
	ktrace_diff_concurrent_fill(&out->writer_a, 'A', &wa);
	ktrace_diff_concurrent_fill(&out->writer_b, 'B', &wb);
	writer_range(r->a, &wa, &lo, &hi);
	out->lo = lo > ex->ptr ? lo : ex->ptr;
	out->hi = hi < ex->ptr + ex->hash_len ? hi : ex->ptr + ex->hash_len;
	out->same_graph = same_graph_launch(la, wa.launch);
	return 1;
}

/* Launch index li of A reads or writes bytes of race w, whose last writer
 * before it is one of w's launches: what it found there is the race's
 * outcome (a later writer, or the bytes' allocation freed and reused,
 * would have replaced it).  Its region there, and the racing regions, are
 * certain. */
static int touches(const struct diff_result *r, const int32_t *match_a, size_t li, const struct diff_race *w)
{
	const struct tm_launch *la = &r->a->launches[li];

	for (uint32_t g = 0; g < la->look->nregions; g++) {
		const struct tm_region *x = &la->regions[g];
		const struct tm_extent *e = ktrace_tm_region_extent(r->a, x);
		uint64_t lo = e->ptr > w->lo ? e->ptr : w->lo, end = e->ptr + (e->hash_len ? e->hash_len : 1);
		uint64_t hi = end < w->hi ? end : w->hi;
		struct diff_writer last;

		if (!certain(x) || lo >= hi)
			continue;
		ktrace_diff_last_writer(r->a, match_a, li, lo, hi - lo, &last);
		if (last.launch == w->first || last.launch == w->second)
			return 1;
	}
	return 0;
}

/* A write/write race of both runs, before launch index li of A, over bytes
 * it reads or writes that the race wrote last (touches). */
static const struct diff_race *ww_race_of(const struct diff_result *r, const int32_t *match_a, size_t li)
{
	for (size_t k = 0; k < r->nraces; k++) {
		const struct diff_race *w = &r->races[k];

		if (w->run != 'A' || !w->in_both || w->second->seq >= r->a->launches[li].seq ||
		    !certain(&w->first->regions[w->region_first]) || !certain(&w->second->regions[w->region_second]))
			continue;
		if (touches(r, match_a, li, w))
			return w;
	}
	return NULL;
}

int ktrace_diff_rw_races(struct diff_result *r, const int32_t *match_a)
{
	const struct tm_launch *first = r->ndivs ? r->divs[0].la : NULL;

	if (!r->order[0] || !r->order[1])
		return 0;
	for (size_t i = 0; i < r->a->nlaunches; i++) {
		const struct tm_launch *la = &r->a->launches[i];

		if (match_a[i] < 0)
			continue;
		for (uint32_t g = 0; g < la->look->nregions; g++) {
			struct diff_rw_race x;

			if (!race_of(r, i, &r->b->launches[match_a[i]], &la->regions[g], la == first, &x))
				continue;
			r->rw_races++;
			if (keep(r, &x, la == first))
				return -1;
		}
	}
	if (first)
		r->race_first_ww = ww_race_of(r, match_a, (size_t)(first - r->a->launches));
	return 0;
}

static void side_str(const struct diff_concurrent *c, char *buf, size_t cap)
{
	if (c->launch)
		snprintf(buf, cap, "%s (launch %" PRIu64 ", stream 0x%" PRIx64 ", argument %s)",
			 ktrace_tm_kernel_name(c->launch->look->kernel), c->seq, c->stream, c->arg);
	else
		snprintf(buf, cap, "a %s (operation %" PRIu64 ", stream 0x%" PRIx64 ")",
			 c->op && c->op->type == TM_OP_MEMSET ? "memset" : "copy", c->seq, c->stream);
}

void ktrace_diff_rw_race_missing(const struct diff_rw_race *x, char *buf, size_t cap)
{
	if (x->same_graph)
		snprintf(buf, cap, "both are nodes of one graph launch and no edge of the graph orders them");
	else
		snprintf(buf, cap, "no stream order, event (an event recorded on stream 0x%" PRIx64 " after the write "
			 "and waited for on stream 0x%" PRIx64 " before the read), host synchronisation or graph edge "
			 "orders them", x->writer_a.stream, x->reader->look->stream);
}

void ktrace_diff_rw_race_line(const struct diff_rw_race *x, char *buf, size_t cap)
{
	char w[256], missing[256];

	side_str(&x->writer_a, w, sizeof w);
	ktrace_diff_rw_race_missing(x, missing, sizeof missing);
	snprintf(buf, cap, "%s (launch %" PRIu64 ", stream 0x%" PRIx64 ", argument %s) %s bytes 0x%" PRIx64
		 "..0x%" PRIx64 " that %s may write: %s (in both runs; in B: launch %" PRIu64 " and %s %" PRIu64 ")",
		 ktrace_tm_kernel_name(x->reader->look->kernel), x->reader->seq, x->reader->look->stream, x->arg,
		 x->writes_too ? "reads or writes" : "reads", x->lo, x->hi, w,
		 missing, x->reader_b->seq, x->writer_b.launch ? "launch" : "operation", x->writer_b.seq);
}
