/* test/unit/graph_plan_test.c: where a revision's digests land
 * (interpose/graph/graph_hash_plan.c), on revisions made by hand.
 *
 * Checks that sets merge only where the rule allows (the only dependency a
 * hashed kernel node of the same graph outside conditional bodies, by an
 * edge without data; KTRACE_HASH_MERGE), that a merged set lists its own
 * post-hashed regions and then each merged node's pre-hashed regions, that
 * sets of more than 160 entries span several checksum nodes, that
 * read-only inputs (POST_CARRIED) are not post-hashed unless
 * KTRACE_HASH_VERIFY, that a merged node's region of the ptr and hash_len
 * of one its host post-hashes has no entry of its own but reads the
 * host's (not another dependent's, not in a body, not unmerged), and that
 * the layout holds: every word inside the area, none written twice (each
 * set's entries as graph_hash.c lists them, each checksum node's
 * completion word), every region's pre and post word written with that
 * region.
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

/* What the layout writes: per result word, the region hashed there (or a
 * completion word). */
struct written {
	uint64_t ptr, len;
	uint8_t set, done;
};

/* Mark word w written (once only, inside the area). */
static struct written *mark(struct written *w, uint64_t words, uint64_t word)
{
	assert_true(word < words);
	assert_false(w[word].set || w[word].done);
	return &w[word];
}

/* The words set n's pre set (post: its post set) of e entries at off
 * writes: each entry's region, as graph_hash.c lists them, then each
 * checksum node's completion word. */
static void write_set(const struct kt_grev *r, const struct kt_gnode *n, int post, uint64_t off, uint32_t e,
		      struct written *w)
{
	uint64_t *ptr = calloc(2 * (size_t)e + 1, sizeof(*ptr)), *len = ptr + e;

	assert_non_null(ptr);
	assert_int_equal(kt_ghash_set_regions(r, n, post, ptr, len, e), e);
	for (uint32_t k = 0; k < e; k++) {
		struct written *x = mark(w, r->result_words, kt_gset_word(off, k));

		x->set = 1;
		x->ptr = ptr[k];
		x->len = len[k];
	}
	for (uint32_t g = 0; g < kt_gset_groups(e); g++) {
		uint32_t in = e - g * KT_HASH_MAX_REGIONS;

		if (in > KT_HASH_MAX_REGIONS)
			in = KT_HASH_MAX_REGIONS;
		mark(w, r->result_words, off + (uint64_t)g * (KT_HASH_MAX_REGIONS + 1) + in)->done = 1;
	}
	free(ptr);
}

/* Word `word`, read for region g, lies in [off, off + kt_gset_words(e))
 * and was written with g's ptr and hash_len. */
static void assert_read(const struct written *w, uint64_t word, const struct ktrace_region *g, uint64_t off,
			uint32_t e)
{
	assert_true(word >= off && word < off + kt_gset_words(e));
	assert_true(w[word].set);
	assert_true(w[word].ptr == g->ptr);
	assert_true(w[word].len == g->hash_len);
}

/* Does host h post-hash a region of g's ptr and hash_len? */
static int host_has(const struct kt_gnode *h, const struct ktrace_region *g)
{
	for (uint32_t i = 0; i < h->nregions; i++)
		if (kt_ghash_post_hashed(h, i) && h->regions[i].ptr == g->ptr && h->regions[i].hash_len == g->hash_len)
			return 1;
	return 0;
}

/* Node n's digests are read where they were written: each region's pre
 * word in its pre set (merged: its host's post set, a word of the host's
 * own when the host post-hashes the region, else one of n's), its post
 * word in its post set, each of the same region. */
static void assert_reads(const struct kt_grev *r, const struct kt_gnode *n, const struct written *w)
{
	const struct kt_gnode *host = n->pre_host == KT_GRAPH_NONE ? NULL : &r->nodes[n->pre_host];
	struct kt_gwalk walk = { 0, 0 };
	uint32_t shared = 0;

	for (uint32_t k = 0; k < n->nregions; k++) {
		const struct ktrace_region *g = &n->regions[k];
		uint64_t pre, post = UINT64_MAX;

		if (!g->hash_len)
			continue;
		assert_int_equal(kt_ghash_words(n, k, &walk, &pre, &post), kt_ghash_post_hashed(n, k));
		if (host) {
			assert_true(n->pre_off == host->post_off);
			assert_read(w, pre, g, host->post_off, host->post_entries);
			assert_int_equal(pre < kt_gset_word(host->post_off, n->pre_first), host_has(host, g));
			shared += pre < kt_gset_word(host->post_off, n->pre_first);
		} else {
			assert_read(w, pre, g, n->pre_off, n->nhashed);
		}
		if (post != UINT64_MAX)
			assert_read(w, post, g, n->post_off, n->post_entries);
	}
	assert_int_equal(walk.post, n->npost);
	assert_int_equal(walk.own + shared, n->nhashed);
	assert_int_equal(shared, n->nshared);
}

/* Every word of the layout lies in the area, none is written twice, and
 * every region's digests are read from words written with that region. */
static void assert_layout(const struct kt_grev *r)
{
	struct written *w = calloc(r->result_words + 1, sizeof(*w));

	assert_non_null(w);
	for (uint32_t i = 0; i < r->nnodes; i++) {
		const struct kt_gnode *n = &r->nodes[i];

		if (!(n->rec.flags & KTRACE_GNODEF_HASHED))
			continue;
		if (n->pre_host == KT_GRAPH_NONE)
			write_set(r, n, 0, n->pre_off, n->nhashed, w);
		if (n->post_entries)
			write_set(r, n, 1, n->post_off, n->post_entries, w);
	}
	for (uint32_t i = 0; i < r->nnodes; i++)
		if (r->nodes[i].rec.flags & KTRACE_GNODEF_HASHED)
			assert_reads(r, &r->nodes[i], w);
	free(w);
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

/* Region k of node i is region k2 of node i2 (len: its hash_len). */
static void same_as(struct fixture *f, uint32_t i, uint32_t k, uint32_t i2, uint32_t k2, uint64_t len)
{
	f->regions[i][k].ptr = f->regions[i2][k2].ptr;
	f->regions[i][k].hash_len = len;
}

/* Entries of every set of the layout (pre sets not merged, post sets). */
static uint64_t entries(const struct kt_grev *r)
{
	uint64_t e = 0;

	for (uint32_t i = 0; i < r->nnodes; i++)
		e += (r->nodes[i].pre_host == KT_GRAPH_NONE ? r->nodes[i].nhashed : 0) + r->nodes[i].post_entries;
	return e;
}

/* A chain 0 -> 1 -> 2 of 3 regions each: 1 reads 0's region 0 (shared),
 * 0's region 1 with half its length and a region of its own; 2 reads 1's
 * region 0 (shared, though 0 wrote it first), 0's region 2 (not its
 * host's: its own entry) and 1's region 1 of half a length (shared). */
static void test_shared(void **state)
{
	static struct fixture f;
	static const uint32_t nr[3] = { 3, 3, 3 };

	(void)state;
	make(&f, 3, nr);
	edge(&f, 0, 1);
	edge(&f, 1, 2);
	same_as(&f, 1, 0, 0, 0, 64);
	same_as(&f, 1, 1, 0, 1, 32);
	same_as(&f, 2, 0, 1, 0, 64);
	same_as(&f, 2, 1, 0, 2, 64);
	same_as(&f, 2, 2, 1, 1, 32);
	assert_int_equal(kt_ghash_plan(&f.r, 1), 0);
	assert_int_equal(f.nodes[1].nshared, 1);
	assert_int_equal(f.nodes[2].nshared, 2);
	assert_int_equal(f.nodes[0].post_entries, 3 + 2);
	assert_int_equal(f.nodes[1].post_entries, 3 + 1);
	assert_int_equal(f.nodes[2].post_entries, 3);
	assert_int_equal(f.nodes[1].pre_first, 3);
	assert_int_equal(f.nodes[2].pre_first, 3);
	assert_int_equal(entries(&f.r), 3 + 5 + 4 + 3);
	assert_int_equal(f.r.result_words, kt_gset_words(3) + kt_gset_words(5) + kt_gset_words(4) + kt_gset_words(3));
	assert_layout(&f.r);
	/* not merged: nothing shared, two sets of 3 per node */
	assert_int_equal(kt_ghash_plan(&f.r, 0), 0);
	for (uint32_t i = 0; i < 3; i++) {
		assert_null(f.nodes[i].pre_shared);
		assert_int_equal(f.nodes[i].nshared, 0);
	}
	assert_int_equal(entries(&f.r), 6 * 3);
	assert_layout(&f.r);
}

/* 0 -> {1, 2}: both dependents share 0's entries (1: region A; 2: B, and A
 * twice, so no entry of its own); a region of 1 is not shared with 2. */
static void test_shared_fanout(void **state)
{
	static struct fixture f;
	static const uint32_t nr[3] = { 2, 2, 4 };

	(void)state;
	make(&f, 3, nr);
	edge(&f, 0, 1);
	edge(&f, 0, 2);
	same_as(&f, 1, 0, 0, 0, 64);
	same_as(&f, 2, 0, 0, 1, 64);
	same_as(&f, 2, 1, 0, 0, 64);
	same_as(&f, 2, 2, 0, 0, 64);
	same_as(&f, 2, 3, 1, 1, 64);
	assert_int_equal(kt_ghash_plan(&f.r, 1), 0);
	assert_int_equal(f.nodes[1].pre_host, 0);
	assert_int_equal(f.nodes[2].pre_host, 0);
	assert_int_equal(f.nodes[1].nshared, 1);
	assert_int_equal(f.nodes[2].nshared, 3);
	assert_int_equal(f.nodes[0].post_entries, 2 + 1 + 1);
	assert_int_equal(f.nodes[2].pre_first, 3);
	assert_layout(&f.r);
	/* 2's regions 1 and 2 read the one word of 0's region 0 */
	{
		struct kt_gwalk w = { 0, 0 };
		uint64_t pre[4], post;

		for (uint32_t k = 0; k < 4; k++)
			kt_ghash_words(&f.nodes[2], k, &w, &pre[k], &post);
		assert_true(pre[1] == kt_gset_word(f.nodes[0].post_off, 0));
		assert_true(pre[2] == pre[1]);
		assert_true(pre[0] == kt_gset_word(f.nodes[0].post_off, 1));
		assert_true(pre[3] == kt_gset_word(f.nodes[0].post_off, 3));
	}
}

/* Shared only with what the host post-hashes: a read-only input of 0 (no
 * post word) is not shared, unless KTRACE_HASH_VERIFY measures it; an
 * entry of 0 past the first checksum node is shared. */
static void test_shared_read_only(void **state)
{
	static struct fixture f;
	static const uint32_t nr[2] = { 200, 2 };

	(void)state;
	make(&f, 2, nr);
	edge(&f, 0, 1);
	f.regions[0][0].flags |= KTRACE_REGIONF_POST_CARRIED;
	same_as(&f, 1, 0, 0, 0, 64);
	same_as(&f, 1, 1, 0, 170, 64);
	assert_int_equal(kt_ghash_plan(&f.r, 1), 0);
	assert_int_equal(f.nodes[0].npost, 199);
	assert_int_equal(f.nodes[1].nshared, 1);
	assert_int_equal(f.nodes[0].post_entries, 199 + 1);
	assert_layout(&f.r);
	ktrace_tracer.cfg.hash_verify = 1;
	assert_int_equal(kt_ghash_plan(&f.r, 1), 0);
	assert_int_equal(f.nodes[1].nshared, 2);
	assert_int_equal(f.nodes[0].post_entries, 200);
	assert_int_equal(f.nodes[1].pre_first, 200);
	assert_layout(&f.r);
	ktrace_tracer.cfg.hash_verify = 0;
	assert_int_equal(kt_ghash_plan(&f.r, 0), 0);
	assert_null(f.nodes[1].pre_shared);
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
	same_as(&f, 1, 0, 0, 0, 64);
	assert_int_equal(kt_ghash_plan(&f.r, 1), 0);
	assert_int_equal(f.nodes[1].pre_host, KT_GRAPH_NONE);
	assert_null(f.nodes[1].pre_shared);
	assert_int_equal(f.levels[1].stride, 4 * kt_gset_words(1));
	assert_int_equal(f.r.counters_off, 4 * f.levels[1].stride);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_where),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_shared_fanout),
		cmocka_unit_test(test_shared_read_only),
		cmocka_unit_test(test_body),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
