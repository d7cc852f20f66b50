/* test/unit/graph_plan_test.c: where a revision's digests land
 * (interpose/graph/graph_hash_plan.c), on revisions made by hand.
 *
 * Checks that sets merge only where the rule allows (the only dependency a
 * hashed kernel node of the same graph outside conditional bodies, by an
 * edge without data; KTRACE_HASH_MERGE), that a merged set lists its own
 * post-hashed regions and then each merged node's pre-hashed regions, that
 * sets of more than 160 entries span several checksum nodes, that
 * read-only inputs (POST_CARRIED) are not post-hashed unless
 * KTRACE_HASH_VERIFY, and that no two result words of the layout collide
 * (every region's pre and post word, every checksum node's completion
 * word, inside the area).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/graph/graph_internal.h"

struct ktrace_tracer ktrace_tracer;

#define MAXN 8

/* A revision of n kernel nodes at level 0, each with regions[k] hashed
 * regions, recorded in index order; edges added with edge(). */
struct fixture {
	struct kt_grev r;
	struct kt_gnode nodes[MAXN];
	struct kt_glevel levels[2];
	struct ktrace_graph_edge edges[16];
	uint32_t order[MAXN];
	struct ktrace_region regions[MAXN][200];
};

static void make(struct fixture *f, uint32_t n, const uint32_t *nregions)
{
	memset(f, 0, sizeof(*f));
	f->r.nodes = f->nodes;
	f->r.nnodes = n;
	f->r.levels = f->levels;
	f->r.nlevels = 1;
	f->levels[0].parent = KT_GRAPH_NONE;
	f->levels[0].run = KT_GRAPH_NONE;
	f->r.edges = f->edges;
	f->r.order = f->order;
	f->r.nrec = n;
	for (uint32_t i = 0; i < n; i++) {
		struct kt_gnode *g = &f->nodes[i];

		f->order[i] = i;
		g->rec.kind = KTRACE_GNODE_KERNEL;
		g->regions = f->regions[i];
		g->nregions = g->nhashed = nregions[i];
		for (uint32_t k = 0; k < nregions[i]; k++) {
			g->regions[k].ptr = 0x1000000ull * (i + 1) + 0x1000ull * k;
			g->regions[k].hash_len = 64;
		}
	}
}

static void edge(struct fixture *f, uint32_t from, uint32_t to)
{
	f->edges[f->r.nedges++] = (struct ktrace_graph_edge){ from, to };
}

/* Mark word w (once only, inside the area). */
static void mark(uint8_t *seen, uint64_t words, uint64_t w)
{
	assert_true(w < words);
	assert_int_equal(seen[w], 0);
	seen[w] = 1;
}

/* The completion words of a set of e entries at off. */
static void mark_done_words(uint8_t *seen, uint64_t words, uint64_t off, uint32_t e)
{
	for (uint32_t g = 0; g < kt_gset_groups(e); g++) {
		uint32_t in = e - g * KT_HASH_MAX_REGIONS;

		if (in > KT_HASH_MAX_REGIONS)
			in = KT_HASH_MAX_REGIONS;
		mark(seen, words, off + (uint64_t)g * (KT_HASH_MAX_REGIONS + 1) + in);
	}
}

/* Every word of the layout lies in the area and no two coincide. */
static void assert_layout(const struct kt_grev *r)
{
	uint8_t *seen = calloc(r->result_words + 1, 1);

	assert_non_null(seen);
	for (uint32_t i = 0; i < r->nnodes; i++) {
		const struct kt_gnode *n = &r->nodes[i];
		uint32_t pre = 0, post = 0;

		if (!(n->rec.flags & KTRACE_GNODEF_HASHED))
			continue;
		if (n->pre_host == KT_GRAPH_NONE)
			mark_done_words(seen, r->result_words, n->pre_off, n->nhashed);
		if (n->post_entries)
			mark_done_words(seen, r->result_words, n->post_off, n->post_entries);
		for (uint32_t k = 0; k < n->nregions; k++) {
			mark(seen, r->result_words, kt_gset_word(n->pre_off, (uint64_t)n->pre_first + pre++));
			if (kt_ghash_post_hashed(n, k))
				mark(seen, r->result_words, kt_gset_word(n->post_off, post++));
		}
		assert_int_equal(post, n->npost);
	}
	free(seen);
}

/* A chain 0 -> 1 -> 2 of 100, 120 and 50 regions: merged, 1's pre-hash is
 * entries 100.. of 0's post set (two checksum nodes), 2's of 1's. */
static void test_chain(void **state)
{
	static struct fixture f;
	static const uint32_t nr[3] = { 100, 120, 50 };

	(void)state;
	make(&f, 3, nr);
	edge(&f, 0, 1);
	edge(&f, 1, 2);
	assert_int_equal(kt_ghash_plan(&f.r, 1), 0);
	assert_int_equal(f.nodes[0].pre_host, KT_GRAPH_NONE);
	assert_int_equal(f.nodes[1].pre_host, 0);
	assert_int_equal(f.nodes[2].pre_host, 1);
	assert_int_equal(f.nodes[0].post_entries, 220);
	assert_int_equal(f.nodes[1].post_entries, 170);
	assert_int_equal(f.nodes[2].post_entries, 50);
	assert_true(f.nodes[1].pre_off == f.nodes[0].post_off);
	assert_int_equal(f.nodes[1].pre_first, 100);
	assert_int_equal(f.nodes[2].pre_first, 120);
	assert_int_equal(f.r.result_words, kt_gset_words(100) + kt_gset_words(220) + kt_gset_words(170) +
						   kt_gset_words(50));
	assert_layout(&f.r);
	/* not merged: two sets per node */
	assert_int_equal(kt_ghash_plan(&f.r, 0), 0);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(f.nodes[i].pre_host, KT_GRAPH_NONE);
		assert_int_equal(f.nodes[i].post_entries, nr[i]);
	}
	assert_layout(&f.r);
}

/* 0 -> {1, 2}; 1 -> 3 by an edge with data; {2, 3} -> 4; 5 in a child
 * graph after 0; 6 has no hashed region, 6 -> 7: only 1 and 2 merge. */
static void test_where(void **state)
{
	static struct fixture f;
	static const uint32_t nr[8] = { 2, 3, 4, 5, 6, 7, 0, 1 };

	(void)state;
	make(&f, 8, nr);
	edge(&f, 0, 1);
	edge(&f, 0, 2);
	edge(&f, 1, 3);
	f.nodes[3].dep_data = 1;
	edge(&f, 2, 4);
	edge(&f, 3, 4);
	f.r.nlevels = 2;
	f.levels[1] = (struct kt_glevel){ .parent = KT_GRAPH_NONE, .run = KT_GRAPH_NONE };
	f.nodes[5].level = 1;
	edge(&f, 0, 5);
	edge(&f, 6, 7);
	assert_int_equal(kt_ghash_plan(&f.r, 1), 0);
	assert_int_equal(f.nodes[1].pre_host, 0);
	assert_int_equal(f.nodes[2].pre_host, 0);
	assert_int_equal(f.nodes[0].fold_first, 1);
	assert_int_equal(f.nodes[1].fold_next, 2);
	assert_int_equal(f.nodes[2].fold_next, KT_GRAPH_NONE);
	assert_int_equal(f.nodes[1].pre_first, 2);
	assert_int_equal(f.nodes[2].pre_first, 5);
	assert_int_equal(f.nodes[0].post_entries, 9);
	for (uint32_t i = 3; i < 8; i++)
		assert_int_equal(f.nodes[i].pre_host, KT_GRAPH_NONE);
	assert_false(f.nodes[6].rec.flags & KTRACE_GNODEF_HASHED);
	assert_layout(&f.r);
	/* filtered: neither hashed nor merged into */
	f.nodes[0].rec.flags |= KTRACE_GNODEF_FILTERED;
	assert_int_equal(kt_ghash_plan(&f.r, 1), 0);
	assert_int_equal(f.nodes[1].pre_host, KT_GRAPH_NONE);
	assert_int_equal(f.nodes[2].pre_host, KT_GRAPH_NONE);
	assert_layout(&f.r);
}

/* Read-only inputs: no post word unless verified; a node of read-only
 * inputs only has no post set, unless a dependent merges into it. */
static void test_read_only(void **state)
{
	static struct fixture f;
	static const uint32_t nr[3] = { 3, 2, 1 };

	(void)state;
	make(&f, 3, nr);
	edge(&f, 0, 1);
	f.regions[0][1].flags |= KTRACE_REGIONF_POST_CARRIED;
	f.regions[1][0].flags |= KTRACE_REGIONF_POST_CARRIED;
	f.regions[1][1].flags |= KTRACE_REGIONF_POST_CARRIED;
	f.regions[2][0].flags |= KTRACE_REGIONF_POST_CARRIED;
	assert_int_equal(kt_ghash_plan(&f.r, 0), 0);
	assert_int_equal(f.nodes[0].npost, 2);
	assert_int_equal(f.nodes[1].post_entries, 0);
	assert_int_equal(f.nodes[2].post_entries, 0);
	assert_int_equal(f.r.result_words, kt_gset_words(3) + kt_gset_words(2) + kt_gset_words(2) + kt_gset_words(1));
	assert_layout(&f.r);
	assert_int_equal(kt_ghash_plan(&f.r, 1), 0);
	assert_int_equal(f.nodes[0].post_entries, 4);
	assert_int_equal(f.nodes[1].pre_first, 2);
	assert_layout(&f.r);
	ktrace_tracer.cfg.hash_verify = 1;
	assert_int_equal(kt_ghash_plan(&f.r, 1), 0);
	assert_int_equal(f.nodes[0].post_entries, 5);
	assert_int_equal(f.nodes[1].post_entries, 2);
	assert_int_equal(f.nodes[2].post_entries, 1);
	assert_layout(&f.r);
	ktrace_tracer.cfg.hash_verify = 0;
}

/* Nodes of a conditional body keep their own sets (the body's ring). */
static void test_body(void **state)
{
	static struct fixture f;
	static const uint32_t nr[2] = { 1, 1 };
	uint32_t body_order[2] = { 0, 1 };

	(void)state;
	make(&f, 2, nr);
	edge(&f, 0, 1);
	f.r.nrec = 0;
	f.r.nbody_rec = 2;
	f.r.body_order = body_order;
	f.r.ncond = 1;
	f.r.ring = 4;
	f.r.nlevels = 2;
	f.levels[1] = (struct kt_glevel){ .parent = KT_GRAPH_NONE, .run = 1, .nrecs = 2, .first_rec = 0 };
	f.nodes[0].level = f.nodes[1].level = 1;
	assert_int_equal(kt_ghash_plan(&f.r, 1), 0);
	assert_int_equal(f.nodes[1].pre_host, KT_GRAPH_NONE);
	assert_int_equal(f.levels[1].stride, 4 * kt_gset_words(1));
	assert_int_equal(f.r.counters_off, 4 * f.levels[1].stride);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_where),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_body),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
