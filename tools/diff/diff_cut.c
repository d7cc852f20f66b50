/* tools/diff/diff_cut.c: regions hashed only up to KTRACE_HASH_MAX (flag
 * CAPPED, docs/format.md "Hash extents"), in the diff.
 *
 * Owns what the diff makes of a cut: the bytes after the cut are unknown, so
 * a divergent launch whose input was cut is never "non-deterministic
 * because its hashed inputs matched" (diff_engine.c counts such an input as
 * not compared), the launch that may have written the bytes after the cut
 * is found (the last one with a cut region, not read-only, over the same
 * unhashed bytes), and that launch becomes unverified with reason hash_cut:
 * its difference may lie where no digest looked.
 */
#include "tools/diff/diff_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/ktrace_format.h"
#include "tools/model/array.h"

int ktrace_diff_region_cut(const struct tm_trace *t, const struct tm_region *g)
{
	return g && (g->flags & KTRACE_REGIONF_CAPPED) && !(g->flags & KTRACE_REGIONF_UNHASHED) &&
	       ktrace_tm_region_hash_len(t, g);
}

/* The unhashed bytes [*lo, *hi) after the cut of region g of launch l of
 * t: to the extent its CUT record gives (format 1.14; *tail EXACT), else to
 * its allocation's end (*tail BOUNDED).  With neither (no allocation known,
 * or the cut at or past its end: a run of VMM mappings reaches further than
 * the allocation the record names) how many bytes follow is unknown (*tail
 * UNKNOWN), and [*lo, *hi) is the first of them only. */
static int cut_range(const struct tm_trace *t, const struct tm_launch *l, const struct tm_region *g, uint64_t *lo,
		     uint64_t *hi, enum diff_cut_tail *tail)
{
	const struct ktrace_rec_cut *c;
	const struct tm_extent *e = ktrace_tm_region_extent(t, g);

	if (!ktrace_diff_region_cut(t, g))
		return 0;
	c = ktrace_tm_cut(t, l->seq, g->param_offset);
	*lo = e->ptr + e->hash_len;
	if (*lo < e->ptr)
		*lo = UINT64_MAX - 1;
	if (c && c->ptr == e->ptr && c->extent > e->hash_len) {
		*tail = DIFF_CUT_TAIL_EXACT;
		*hi = e->ptr + c->extent;
	} else {
		*tail = DIFF_CUT_TAIL_BOUNDED;
		*hi = e->alloc.base + e->alloc.size;
	}
	if (*hi <= *lo) {
		*tail = DIFF_CUT_TAIL_UNKNOWN;
		*hi = *lo + 1;
	}
	return 1;
}

uint64_t ktrace_diff_cut_tail(const struct tm_trace *t, const struct tm_launch *l, const struct tm_region *g,
			      enum diff_cut_tail *tail)
{
	uint64_t lo, hi;

	*tail = DIFF_CUT_TAIL_UNKNOWN;
	return g && cut_range(t, l, g, &lo, &hi, tail) && *tail != DIFF_CUT_TAIL_UNKNOWN ? hi - lo : 0;
}

void ktrace_diff_cut_tail_str(const struct diff_arg *u, char *buf, size_t cap)
{
	if (u->cut_tail_kind == DIFF_CUT_TAIL_UNKNOWN)
		snprintf(buf, cap, "an unknown number of bytes");
	else
		snprintf(buf, cap, "%s%" PRIu64 " bytes", u->cut_tail_kind == DIFF_CUT_TAIL_EXACT ? "" : "up to ",
			 u->cut_tail);
}

void ktrace_diff_cut_writer(const struct tm_trace *t, const int32_t *match, size_t li, const struct tm_region *g,
			    struct diff_writer *w)
{
	uint64_t lo, hi;
	enum diff_cut_tail tail;

	memset(w, 0, sizeof *w);
	w->type = DIFF_WRITER_NONE;
	if (!g || !cut_range(t, &t->launches[li], g, &lo, &hi, &tail))
		return;
	for (size_t i = li; i-- > 0;) {
		const struct tm_launch *l = &t->launches[i];

		if (l->flags & KTRACE_LAUNCHF_FAILED)
			continue;
		for (uint32_t k = 0; k < l->look->nregions; k++) {
			const struct tm_region *h = &l->regions[k];
			uint64_t hlo, hhi;
			int ord;

			if (!cut_range(t, l, h, &hlo, &hhi, &tail) || hlo >= hi || lo >= hhi ||
			    ktrace_diff_region_is_const(l->look->kernel, h))
				continue;
			w->type = DIFF_WRITER_LAUNCH_UNHASHED;
			w->seq = l->seq;
			w->launch = l;
			w->only_here = match[i] < 0;
			ktrace_diff_region_name(l->look->kernel, h, w->arg, sizeof w->arg, &ord);
			return;
		}
	}
}

/* The unverified entry of launch la (index in r->unv), or -1. */
static long unverified_of(const struct diff_result *r, const struct tm_launch *la)
{
	for (size_t i = 0; i < r->nunv; i++)
		if (r->unv[i].la == la)
			return (long)i;
	return -1;
}

static int diverged(const struct diff_result *r, const struct tm_launch *la)
{
	for (size_t i = 0; i < r->ndivs; i++)
		if (r->divs[i].la == la)
			return 1;
	return 0;
}

static void count_kernel(struct diff_result *r, const struct tm_launch *la)
{
	const char *name = ktrace_tm_kernel_name(la->look->kernel);

	for (size_t k = 0; k < r->nkernels; k++)
		if (!strcmp(r->kernels[k].name, name)) {
			r->kernels[k].unverified++;
			return;
		}
}

/* Add reason hash_cut, for writer w's argument, to its launch's entry
 * (a new one, kept in run A's order, when it was verified). */
static int mark_writer(struct diff_result *r, const int32_t *match_a, const struct diff_writer *w)
{
	size_t li = (size_t)(w->launch - r->a->launches), cap = r->nunv;
	long at = unverified_of(r, w->launch);
	struct diff_unverified *u;

	if (match_a[li] < 0 || diverged(r, w->launch))
		return 0;
	if (at < 0) {
		size_t pos = 0;

		if (ktrace_grow(&r->unv, &cap, r->nunv + 1, sizeof *r->unv))
			return -1;
		while (pos < r->nunv && r->unv[pos].la->seq < w->launch->seq)
			pos++;
		memmove(&r->unv[pos + 1], &r->unv[pos], (r->nunv - pos) * sizeof *r->unv);
		r->nunv++;
		u = &r->unv[pos];
		memset(u, 0, sizeof *u);
		u->la = w->launch;
		u->lb = &r->b->launches[match_a[li]];
		u->reason = KTRACE_UNV_HASH_CUT;
		r->unverified++;
		r->unverified_by[KTRACE_UNV_HASH_CUT]++;
		count_kernel(r, w->launch);
	} else {
		u = &r->unv[at];
	}
	if (u->reasons & (1u << KTRACE_UNV_HASH_CUT))
		return 0;
	u->reasons |= 1u << KTRACE_UNV_HASH_CUT;
	for (uint32_t k = 0; k < w->launch->look->nregions && u->reason == KTRACE_UNV_HASH_CUT; k++) {
		const struct tm_region *h = &w->launch->regions[k];
		char name[96];
		int ord;

		ktrace_diff_region_name(w->launch->look->kernel, h, name, sizeof name, &ord);
		if (strcmp(name, w->arg) || u->noffsets >= DIFF_UNV_OFFSETS)
			continue;
		u->offset[u->noffsets] = h->param_offset;
		u->offset_run[u->noffsets++] = 0;
	}
	return 0;
}

int ktrace_diff_mark_cut_writers(struct diff_result *r, const int32_t *match_a)
{
	for (size_t i = 0; i < r->ndivs; i++) {
		const struct diff_divergence *d = &r->divs[i];

		for (size_t k = 0; k < d->nunverified; k++)
			if (d->unverified[k].cut && d->unverified[k].wa.launch &&
			    mark_writer(r, match_a, &d->unverified[k].wa))
				return -1;
	}
	return 0;
}
