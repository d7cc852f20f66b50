/* interpose/model/read_only.c: the read-only inputs of a launch
 * (interpose/model/read_only.h).
 *
 * Owns the rule that turns a write proof into a region whose post-hash may
 * be skipped: a parameter's (param_scan.h, written[]: proven from the
 * kernel's code), when no region the kernel may write through reaches its
 * allocation or its bytes; a word's (KTRACE_WORDF_READ_ONLY: an input slot
 * of ATen's elementwise data array, which its kernels only read), when no
 * such region overlaps its bytes.
 * A launch of a few regions compares each proven one with each other; one
 * of many sorts the others (their starts, with the furthest end reached so
 * far, and their allocations) and looks each proven one up: n log n, not
 * n^2, with the same answers.  Also the words of the NOTE that says such a
 * proof did not hold.  Calls nothing but libc.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "interpose/model/read_only.h"

/* a word inside a by-value struct, a collective's buffer: the proof is of whole parameters */
#define NOT_PROVEN_FLAGS (KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_COLL_BUFFER)
/* At most this many pairs of a proven region and another: compared pair by pair. */
#define PAIRWISE_MAX 64
/* Writers sorted on the stack up to this many (more: on the heap). */
#define WRITERS_ON_STACK 64

enum proof { NOT_PROVEN, PARAM_PROVEN, WORD_PROVEN };

/* How region g is proven never written through by the kernel: by its
 * parameter's proof, by its word's, or not. */
static enum proof proof_of(const struct ktrace_param_layout *l, const struct ktrace_region *g)
{
	uint32_t w = g->param_offset / 8;

	if (l->written && g->ordinal < l->nparams && l->written[g->ordinal] == KTRACE_WRITTEN_READ_ONLY &&
	    !(g->flags & NOT_PROVEN_FLAGS))
		return PARAM_PROVEN;
	if (g->param_offset % 8 == 0 && w < l->nwords && (l->word_flags[w] & KTRACE_WORDF_READ_ONLY) &&
	    !(g->flags & (KTRACE_REGIONF_GUESSED | KTRACE_REGIONF_COLL_BUFFER)))
		return WORD_PROVEN;
	return NOT_PROVEN;
}

static int proven_read_only(const struct ktrace_param_layout *l, const struct ktrace_region *g)
{
	return proof_of(l, g) != NOT_PROVEN;
}

/* The bytes region g may name start at g->ptr and end before this (a
 * region not hashed: its first byte; wraps as the sum does). */
static uint64_t span_end(const struct ktrace_region *g)
{
	return g->ptr + (g->hash_len ? g->hash_len : 1);
}

/* Regions a and b may name the same bytes: one allocation (by_alloc), or
 * overlapping ranges.  A pointer whose writes a parameter's proof leaves
 * unbounded may reach past its hashed extent, so for such a proof a whole
 * allocation counts; an ATen input slot's writer is the output slot, which
 * PyTorch keeps from overlapping an input in part (TensorIterator's
 * overlap checks): there its bytes are what count. */
static int may_share(const struct ktrace_region *a, const struct ktrace_region *b, int by_alloc)
{
	if (by_alloc && a->alloc_base && a->alloc_base == b->alloc_base)
		return 1;
	return a->ptr < span_end(b) && b->ptr < span_end(a);
}

static int is_candidate(const struct ktrace_param_layout *l, const struct ktrace_region *g)
{
	return g->hash_len && proven_read_only(l, g);
}

/* Flag candidate i when no region not proven may share with it. */
static uint32_t flag_pairwise(const struct ktrace_param_layout *l, struct ktrace_region *g, uint32_t n)
{
	uint32_t flagged = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t k;

		if (!is_candidate(l, &g[i]))
			continue;
		int by_alloc = proof_of(l, &g[i]) == PARAM_PROVEN;
		for (k = 0; k < n; k++)
			if (k != i && !proven_read_only(l, &g[k]) && may_share(&g[i], &g[k], by_alloc))
				break;
		if (k < n)
			continue;
		g[i].flags |= KTRACE_REGIONF_POST_CARRIED;
		flagged++;
	}
	return flagged;
}

/* The regions not proven, sorted: by start (end: the furthest end of any
 * of them starting there or before), and their allocations. */
struct writers {
	struct span {
		uint64_t start, end;
	} *span;
	uint64_t *base;
	uint32_t n, nbase;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void writers_sort(struct writers *w, const struct ktrace_param_layout *l, const struct ktrace_region *g,
			 uint32_t n)
{
	w->n = w->nbase = 0;
	for (uint32_t k = 0; k < n; k++) {
		if (proven_read_only(l, &g[k]))
			continue;
		w->span[w->n++] = (struct span){ g[k].ptr, span_end(&g[k]) };
		if (g[k].alloc_base)
			w->base[w->nbase++] = g[k].alloc_base;
	}
	qsort(w->span, w->n, sizeof(*w->span), cmp_span);
	qsort(w->base, w->nbase, sizeof(*w->base), cmp_u64);
	for (uint32_t k = 1; k < w->n; k++)
		if (w->span[k].end < w->span[k - 1].end)
			w->span[k].end = w->span[k - 1].end;
}

/* Some writer may share with region a (may_share with a first). */
static int writers_reach(const struct writers *w, const struct ktrace_region *a, int by_alloc)
{
	uint64_t end = span_end(a);
	uint32_t lo = 0, hi = w->n;

	if (by_alloc && a->alloc_base && bsearch(&a->alloc_base, w->base, w->nbase, sizeof(*w->base), cmp_u64))
		return 1;
	while (lo < hi) { /* lo: how many writers start before end */
		uint32_t mid = lo + (hi - lo) / 2;

		if (w->span[mid].start < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && w->span[lo - 1].end > a->ptr;
}

uint32_t ktrace_regions_read_only(const struct ktrace_param_layout *l, struct ktrace_region *g, uint32_t n)
{
	struct span span_stack[WRITERS_ON_STACK];
	uint64_t base_stack[WRITERS_ON_STACK];
	struct writers w = { span_stack, base_stack, 0, 0 };
	uint32_t candidates = 0, flagged = 0;

	if (!l || (!l->written && !l->read_only_words))
		return 0;
	for (uint32_t i = 0; i < n; i++)
		candidates += (uint32_t)is_candidate(l, &g[i]);
	if (!candidates || (uint64_t)candidates * n <= PAIRWISE_MAX)
		return flag_pairwise(l, g, n);
	if (n > WRITERS_ON_STACK) {
		w.span = malloc((size_t)n * sizeof(*w.span));
		w.base = malloc((size_t)n * sizeof(*w.base));
		if (!w.span || !w.base) {
			free(w.span);
			free(w.base);
			return flag_pairwise(l, g, n); /* out of memory: the same answers, slower */
		}
	}
	writers_sort(&w, l, g, n);
	for (uint32_t i = 0; i < n; i++)
		if (is_candidate(l, &g[i]) && !writers_reach(&w, &g[i], proof_of(l, &g[i]) == PARAM_PROVEN)) {
			g[i].flags |= KTRACE_REGIONF_POST_CARRIED;
			flagged++;
		}
	if (w.span != span_stack) {
		free(w.span);
		free(w.base);
	}
	return flagged;
}

void ktrace_read_only_mismatch_text(char *buf, size_t cap, uint64_t op_seq, const struct ktrace_region *g)
{
	snprintf(buf, cap,
		 "read-only input written by the launch (its write proof does not hold): op_seq %" PRIu64
		 " region %#" PRIx64 " (%" PRIu64 " bytes, parameter offset %u) pre-digest %016" PRIx64
		 ", measured post-digest %016" PRIx64,
		 op_seq, g->ptr, g->hash_len, g->param_offset, g->pre_hash, g->post_hash);
}
