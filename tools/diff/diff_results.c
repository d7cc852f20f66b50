/* tools/diff/diff_results.c: what the program itself observed, and how exact the
 * hashed extents were.
 *
 * Owns the comparison of the digests of what device-to-host copies delivered
 * (MEMCPY dst_digest, docs/format.md): the copies of each run are grouped by
 * stream, a stream of A goes with the stream of B that the launch alignment
 * matched it with (the legacy and per-thread streams with themselves), and
 * each pair of groups is aligned in operation order by copy size (Myers'
 * alignment, as launches are), so one extra copy in a run does not shift the
 * others.  Also counts each run's hashed regions by exactness, and prints
 * both as lines of the text report.  Calls the trace model and the aligner.
 */
#include "tools/diff/diff_internal.h"

#include <inttypes.h>
#include <stdlib.h>

#define LEGACY_STREAM 1     /* CU_STREAM_LEGACY */
#define PER_THREAD_STREAM 2 /* CU_STREAM_PER_THREAD */

void ktrace_diff_count_extents(const struct tm_trace *t, struct diff_extents *e)
{
	int known = t->format_minor >= 2;

	e->exact = e->inferred = e->signature = e->unknown = e->cut = 0;
	for (size_t i = 0; i < t->nlaunches; i++) {
		const struct tm_launch *l = &t->launches[i];

		for (uint32_t k = 0; k < l->look->nregions; k++) {
			const struct tm_region *g = &l->regions[k];

			if (!ktrace_tm_region_hash_len(t, g) || (g->flags & KTRACE_REGIONF_UNHASHED))
				continue;
			e->cut += (g->flags & KTRACE_REGIONF_CAPPED) != 0;
			if (!known)
				e->unknown++;
			else if (g->flags & KTRACE_REGIONF_EXACT)
				e->exact++;
			else if (g->flags & KTRACE_REGIONF_SIGNATURE)
				e->signature++;
			else
				e->inferred++;
		}
	}
}

/* ---- device-to-host copies ------------------------------------------------------ */

static int is_device_to_host(const struct tm_op *o)
{
	return o->type == TM_OP_MEMCPY &&
	       (o->dst_digest_state != KTRACE_DST_DIGEST_NONE || o->dir == KTRACE_COPY_DTOH);
}

/* A run's device-to-host copies, in operation order. */
struct copies {
	const struct tm_op **v;
	size_t n;
	unsigned char *taken; /* paired, or in a stream group already done */
};

static int collect(const struct tm_trace *t, struct copies *c)
{
	c->n = 0;
	c->v = malloc((t->nops ? t->nops : 1) * sizeof *c->v);
	c->taken = calloc(t->nops ? t->nops : 1, 1);
	if (!c->v || !c->taken)
		return -1;
	for (size_t i = 0; i < t->nops; i++)
		if (is_device_to_host(&t->ops[i]))
			c->v[c->n++] = &t->ops[i];
	return 0;
}

/* The stream of B that stream s of A goes with; 0 when none. */
static int stream_of_b(const struct diff_stream *st, size_t n, uint64_t s, uint64_t *out)
{
	for (size_t i = 0; i < n; i++) {
		if (st[i].in_a && st[i].in_b && st[i].stream_a == s) {
			*out = st[i].stream_b;
			return 1;
		}
	}
	*out = s;
	return s == 0 || s == LEGACY_STREAM || s == PER_THREAD_STREAM;
}

/* The copies of one stream of a run not yet taken: indices into c->v. */
static size_t group_of(const struct copies *c, uint64_t stream, size_t *idx)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		if (!c->taken[i] && c->v[i]->stream == stream)
			idx[n++] = i;
	return n;
}

struct group_pair {
	const struct copies *a, *b;
	const size_t *ia, *ib;
};

static int same_size(size_t i, size_t j, void *ctx)
{
	const struct group_pair *g = ctx;

	return g->a->v[g->ia[i]]->bytes == g->b->v[g->ib[j]]->bytes;
}

/* One aligned pair of copies. */
static void compare_pair(const struct tm_op *x, const struct tm_op *y, struct diff_program_results *pr)
{
	pr->paired++;
	if (!ktrace_dst_digest_valid(x->dst_digest_state) || !ktrace_dst_digest_valid(y->dst_digest_state)) {
		pr->not_digested++;
		return;
	}
	pr->compared++;
	if (x->dst_digest == y->dst_digest && x->bytes == y->bytes)
		return;
	pr->differ++;
	if (!pr->first_a || x->seq < pr->first_a->seq) {
		pr->first_a = x;
		pr->first_b = y;
	}
}

/* Align the copies of A's stream sa with those of B's stream sb (indices ia,
 * ib) and compare the pairs; mark all of them taken. */
static int align_group(struct copies *a, struct copies *b, const size_t *ia, size_t na, const size_t *ib, size_t nb,
		       struct diff_program_results *pr)
{
	struct group_pair g = { a, b, ia, ib };
	int32_t *ma = malloc((na ? na : 1) * sizeof *ma), *mb = malloc((nb ? nb : 1) * sizeof *mb);

	if (!ma || !mb || ktrace_diff_lcs(na, nb, same_size, &g, ma, mb)) {
		free(ma);
		free(mb);
		return -1;
	}
	for (size_t i = 0; i < na; i++) {
		a->taken[ia[i]] = 1;
		if (ma[i] >= 0)
			compare_pair(a->v[ia[i]], b->v[ib[ma[i]]], pr);
	}
	for (size_t j = 0; j < nb; j++)
		b->taken[ib[j]] = 1;
	free(ma);
	free(mb);
	return 0;
}

/* Every stream of A in turn, with its stream of B. */
static int align_streams(struct copies *a, struct copies *b, const struct diff_stream *st, size_t nst,
			 struct diff_program_results *pr)
{
	size_t *ia = malloc((a->n ? a->n : 1) * sizeof *ia), *ib = malloc((b->n ? b->n : 1) * sizeof *ib);
	int rc = ia && ib ? 0 : -1;

	for (size_t i = 0; !rc && i < a->n; i++) {
		uint64_t sb;
		size_t na, nb = 0;

		if (a->taken[i])
			continue;
		na = group_of(a, a->v[i]->stream, ia);
		if (stream_of_b(st, nst, a->v[i]->stream, &sb))
			nb = group_of(b, sb, ib);
		rc = align_group(a, b, ia, na, ib, nb, pr);
	}
	free(ia);
	free(ib);
	return rc;
}

static int any_state(const struct copies *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i]->dst_digest_state != KTRACE_DST_DIGEST_NONE)
			return 1;
	return 0;
}

static int results_state(const struct copies *a, const struct copies *b, const struct diff_program_results *pr)
{
	if (!a->n && !b->n)
		return DIFF_RESULTS_NONE;
	if (!any_state(a) && !any_state(b))
		return DIFF_RESULTS_NOT_RECORDED;
	if (pr->differ)
		return DIFF_RESULTS_DIFFER;
	return pr->compared ? DIFF_RESULTS_IDENTICAL : DIFF_RESULTS_NOT_COMPARED;
}

int ktrace_diff_compare_results(const struct tm_trace *a, const struct tm_trace *b, const struct diff_stream *streams,
				size_t nstreams, struct diff_program_results *pr)
{
	struct copies ca = { 0 }, cb = { 0 };
	int rc = -1;

	*pr = (struct diff_program_results){ 0 };
	if (collect(a, &ca) || collect(b, &cb) || align_streams(&ca, &cb, streams, nstreams, pr))
		goto out;
	pr->copies_a = ca.n;
	pr->copies_b = cb.n;
	pr->unpaired = ca.n + cb.n - 2 * pr->paired;
	pr->state = results_state(&ca, &cb, pr);
	rc = 0;
out:
	free(ca.v);
	free(ca.taken);
	free(cb.v);
	free(cb.taken);
	return rc;
}

const char *ktrace_diff_results_state_name(int state)
{
	static const char *const names[] = { "none", "not_recorded", "not_compared", "identical", "differ" };

	return state >= 0 && state <= DIFF_RESULTS_DIFFER ? names[state] : "unknown";
}

/* ---- text ---------------------------------------------------------------------------- */

static void text_run_extents(FILE *f, const struct diff_extents *e, const char *run)
{
	uint64_t hashed = e->exact + e->inferred + e->signature + e->unknown;

	fprintf(f, "%" PRIu64 " in %s", hashed, run);
	if (e->unknown)
		fprintf(f, " (%" PRIu64 " of unknown exactness: format before 1.2", e->unknown);
	else if (hashed && e->signature)
		fprintf(f, " (%" PRIu64 " exact, %" PRIu64 " bounded by their kernel's source, %" PRIu64 " inferred",
			e->exact, e->signature, e->inferred);
	else if (hashed)
		fprintf(f, " (%" PRIu64 " exact, %" PRIu64 " inferred", e->exact, e->inferred);
	if (hashed && e->cut)
		fprintf(f, "; %" PRIu64 " cut at KTRACE_HASH_MAX", e->cut);
	if (hashed)
		fputc(')', f);
}

void ktrace_diff_text_extents(FILE *f, const struct diff_result *r)
{
	fputs("regions hashed: ", f);
	text_run_extents(f, &r->extents_a, "A");
	fputs(", ", f);
	text_run_extents(f, &r->extents_b, "B");
	fputc('\n', f);
}

/* "; 3 not digested; 1 in one run only" for what was left out. */
static void text_results_left_out(FILE *f, const struct diff_program_results *pr)
{
	if (pr->not_digested)
		fprintf(f,
			"; %" PRIu64 " not digested in both runs (strided, failed, captured, or asynchronous "
			"without GPU hashing)",
			pr->not_digested);
	if (pr->unpaired)
		fprintf(f, "; %" PRIu64 " in one run only", pr->unpaired);
}

void ktrace_diff_text_results(FILE *f, const struct diff_result *r)
{
	const struct diff_program_results *pr = &r->results;

	switch (pr->state) {
	case DIFF_RESULTS_NONE:
		fputs("program results: no device-to-host copy in either run\n", f);
		return;
	case DIFF_RESULTS_NOT_RECORDED:
		fputs("program results: not recorded (traces before format 1.2)\n", f);
		return;
	case DIFF_RESULTS_NOT_COMPARED:
		fprintf(f, "program results: not compared: no device-to-host copy digested in both runs (%" PRIu64
			   " in A, %" PRIu64 " in B", pr->copies_a, pr->copies_b);
		break;
	case DIFF_RESULTS_IDENTICAL:
		fprintf(f, "program results: identical (%" PRIu64 " device-to-host cop%s compared", pr->compared,
			pr->compared == 1 ? "y" : "ies");
		break;
	default:
		fprintf(f, "program results differ: %" PRIu64 " of %" PRIu64 " device-to-host cop%s (first: op %" PRIu64
			   " in A, op %" PRIu64 " in B, %" PRIu64 " bytes from 0x%" PRIx64 " on stream 0x%" PRIx64,
			pr->differ, pr->compared, pr->compared == 1 ? "y" : "ies", pr->first_a->seq, pr->first_b->seq,
			pr->first_a->bytes, pr->first_a->src, pr->first_a->stream);
		break;
	}
	text_results_left_out(f, pr);
	fputs(")\n", f);
}
