/* interpose/graph/graph_hash_plan.c: where the digests of a revision's
 * kernel nodes land in the result area of ktrace's instrumented copy.
 *
 * Owns the hash sets (graph_internal.h) of a revision: a hashed kernel node
 * has a pre set (checksum nodes after its dependencies and before it) and
 * a post set (after it and before its dependents), each writing one run of
 * result words.  Three rules make fewer checksum nodes, or fewer regions
 * read, with the same digests (docs/hashing.md, "Hashing inside graphs"):
 *
 *  - read-only inputs: a region flagged POST_CARRIED (its parameter proven
 *    read-only, interpose/model/read_only.c) is not post-hashed, unless
 *    KTRACE_HASH_VERIFY measures it anyway; a node with no post-hashed
 *    region and nothing merged into it has no post set;
 *  - merged sets (KTRACE_HASH_MERGE=1): a node whose only dependency is a
 *    hashed kernel node P of the same graph outside conditional bodies, by
 *    an edge without data, has no pre set: P's post set hashes its
 *    pre-hashed regions after P's own.  That set runs after P and before
 *    every dependent of P, the node included, so it hashes the bytes the
 *    node's own pre set would (nothing else runs between P and the node),
 *    and each region's sum does not depend on what else one checksum node
 *    hashes: the digests are bitwise those of separate sets;
 *  - one read for both: a merged node's region of the same ptr and
 *    hash_len as one of P's own post-hashed regions (P wrote a buffer the
 *    node reads) gets no entry of its own: its pre-digest is P's entry of
 *    that region, the same bytes at the same point (kt_gnode.pre_shared,
 *    kt_ghash_words).  Each dependent merged into P may share P's entries;
 *    a dependent's regions are not shared with another dependent's.
 *
 * Layout: the recorded nodes' sets in their order, then each body's ring
 * of slots (its nodes' sets, never merged), then the bodies' run counters
 * and rings of outer runs.  Scratch words match result words one for one.
 * Calls nothing (reads the tracer's settings).
 */
#include <stdlib.h>

#include "interpose/graph/graph_internal.h"

/* A merged node's regions compared with its host's at most this many
 * pairs (at instantiation and update); beyond, each keeps its own entry. */
#define SHARE_MAX_PAIRS (1u << 18)

int kt_ghash_post_hashed(const struct kt_gnode *n, uint32_t i)
{
	const struct ktrace_region *g = &n->regions[i];

	return g->hash_len && (!(g->flags & KTRACE_REGIONF_POST_CARRIED) || ktrace_tracer.cfg.hash_verify);
}

/* Node n's hash fields before any merge: HASHED when it is a kernel node,
 * traced, with hashed regions. */
static void reset_node(struct kt_gnode *n)
{
	n->rec.flags &= (uint16_t)~KTRACE_GNODEF_HASHED;
	free(n->pre_shared);
	n->pre_shared = NULL;
	n->npost = n->post_entries = n->pre_first = n->nshared = 0;
	n->pre_off = n->post_off = 0;
	n->pre_host = n->fold_first = n->fold_next = KT_GRAPH_NONE;
	if (n->rec.kind != KTRACE_GNODE_KERNEL || (n->rec.flags & KTRACE_GNODEF_FILTERED) || !n->nhashed)
		return;
	for (uint32_t i = 0; i < n->nregions; i++)
		n->npost += (uint32_t)kt_ghash_post_hashed(n, i);
	n->post_entries = n->npost;
	n->rec.flags |= KTRACE_GNODEF_HASHED;
}

static int hashed(const struct kt_gnode *n)
{
	return (n->rec.flags & KTRACE_GNODEF_HASHED) != 0;
}

/* The entry of P's post set that hashes a region of g's ptr and hash_len,
 * one of P's own post-hashed regions: 1 + the entry, or 0 when none does. */
static uint16_t host_entry_of(const struct kt_gnode *P, const struct ktrace_region *g)
{
	for (uint32_t i = 0, e = 0; i < P->nregions; i++) {
		if (!kt_ghash_post_hashed(P, i))
			continue;
		if (P->regions[i].ptr == g->ptr && P->regions[i].hash_len == g->hash_len)
			return (uint16_t)(e + 1u);
		e++;
	}
	return 0;
}

/* M, merged into P's post set: which of its hashed regions take their
 * pre-digest from one of P's own entries (M->pre_shared, M->nshared).  Out
 * of memory, or lists too long to compare: none. */
static void share_reads(const struct kt_gnode *P, struct kt_gnode *M)
{
	if (!P->npost || P->npost >= UINT16_MAX || (uint64_t)P->npost * M->nhashed > SHARE_MAX_PAIRS)
		return;
	M->pre_shared = calloc(M->nregions, sizeof(*M->pre_shared));
	for (uint32_t i = 0; M->pre_shared && i < M->nregions; i++) {
		if (!M->regions[i].hash_len)
			continue;
		M->pre_shared[i] = host_entry_of(P, &M->regions[i]);
		M->nshared += M->pre_shared[i] != 0;
	}
	if (!M->nshared) {
		free(M->pre_shared);
		M->pre_shared = NULL;
	}
}

/* Merge each recorded node whose only dependency is a hashed kernel node
 * of its own graph, by an edge without data, into that node's post set
 * (dependents in the recorded order).  Out of memory: nothing merged. */
static void merge_dependents(struct kt_grev *r)
{
	uint32_t *indeg = calloc(r->nnodes + 1, sizeof(*indeg)), *from = calloc(r->nnodes + 1, sizeof(*from));
	uint32_t *last = calloc(r->nnodes + 1, sizeof(*last));

	for (uint32_t e = 0; indeg && from && last && e < r->nedges; e++) {
		indeg[r->edges[e].to]++;
		from[r->edges[e].to] = r->edges[e].from;
	}
	for (uint32_t k = 0; indeg && from && last && k < r->nrec; k++) {
		uint32_t m = r->order[k];
		struct kt_gnode *M = &r->nodes[m], *P = &r->nodes[from[m]];

		if (!hashed(M) || indeg[m] != 1 || M->dep_data || !hashed(P) || P->level != M->level ||
		    r->levels[M->level].run != KT_GRAPH_NONE)
			continue;
		M->pre_host = from[m];
		if (P->fold_first == KT_GRAPH_NONE)
			P->fold_first = m;
		else
			r->nodes[last[from[m]]].fold_next = m;
		last[from[m]] = m;
		share_reads(P, M);
		P->post_entries += M->nhashed - M->nshared;
	}
	free(indeg);
	free(from);
	free(last);
}

/* Node n's sets from *words on: its pre set (unless merged), its post set
 * (when it has one), whose entries after its own post-hashed regions are
 * the pre-hashed regions of the nodes merged into it that share none of
 * its entries. */
static void lay_out_node(struct kt_grev *r, struct kt_gnode *n, uint64_t *words)
{
	uint32_t e;

	if (!hashed(n))
		return;
	if (n->pre_host == KT_GRAPH_NONE) {
		n->pre_off = *words;
		*words += kt_gset_words(n->nhashed);
	}
	if (!n->post_entries)
		return;
	n->post_off = *words;
	*words += kt_gset_words(n->post_entries);
	e = n->npost;
	for (uint32_t m = n->fold_first; m != KT_GRAPH_NONE; m = r->nodes[m].fold_next) {
		r->nodes[m].pre_off = n->post_off;
		r->nodes[m].pre_first = e;
		e += r->nodes[m].nhashed - r->nodes[m].nshared;
	}
}

/* Node n's hashed regions into ptr[], len[] from entry e on (post: its
 * post-hashed ones; else those whose pre-digest is an entry of their own).
 * Returns the next entry. */
static uint32_t list_regions(const struct kt_gnode *n, int post, uint64_t *ptr, uint64_t *len, uint32_t e,
			     uint32_t count)
{
	for (uint32_t i = 0; i < n->nregions && e < count; i++) {
		if (!n->regions[i].hash_len || (post && !kt_ghash_post_hashed(n, i)) ||
		    (!post && n->pre_shared && n->pre_shared[i]))
			continue;
		ptr[e] = n->regions[i].ptr;
		len[e++] = n->regions[i].hash_len;
	}
	return e;
}

uint32_t kt_ghash_set_regions(const struct kt_grev *r, const struct kt_gnode *n, int post, uint64_t *ptr,
			      uint64_t *len, uint32_t count)
{
	uint32_t e = list_regions(n, post, ptr, len, 0, count);

	for (uint32_t m = post ? n->fold_first : KT_GRAPH_NONE; m != KT_GRAPH_NONE; m = r->nodes[m].fold_next)
		e = list_regions(&r->nodes[m], 0, ptr, len, e, count);
	return e;
}

int kt_ghash_words(const struct kt_gnode *n, uint32_t i, struct kt_gwalk *w, uint64_t *pre, uint64_t *post)
{
	uint32_t shared = n->pre_shared ? n->pre_shared[i] : 0;

	*pre = kt_gset_word(n->pre_off, shared ? shared - 1u : (uint64_t)n->pre_first + w->own++);
	if (!kt_ghash_post_hashed(n, i))
		return 0;
	*post = kt_gset_word(n->post_off, w->post++);
	return 1;
}

int kt_ghash_plan(struct kt_grev *r, int merge)
{
	uint64_t words = 0;

	for (uint32_t k = 0; k < r->nrec + r->nbody_rec; k++)
		reset_node(kt_grev_hash_candidate(r, k));
	if (merge)
		merge_dependents(r);
	for (uint32_t k = 0; k < r->nrec; k++)
		lay_out_node(r, kt_grev_hash_candidate(r, k), &words);
	for (uint32_t lv = 0; lv < r->nlevels; lv++) {
		struct kt_glevel *L = &r->levels[lv];

		if (L->run != lv)
			continue;
		L->stride = 0;
		for (uint32_t j = 0; j < L->nrecs; j++)
			lay_out_node(r, &r->nodes[r->body_order[L->first_rec + j]], &L->stride);
		L->ring_off = words;
		words += L->stride * r->ring;
	}
	r->counters_off = words;
	if (r->ncond)
		words += (uint64_t)r->nlevels * (1u + r->ring);
	r->scratch_words = r->result_words = words;
	return words ? 0 : -1;
}
