/* test/unit/graph_merge_test.c: fewer checksum nodes inside CUDA graphs,
 * the same digests (docs/hashing.md, "Hashing inside graphs").
 *
 * build/graph_merge_app (test/unit/graph_merge_app.c) and, for a graph of
 * conditional nodes, build/graph_app run under LD_PRELOAD=libktrace.so
 * with the fake driver's real-memory build, which runs ktrace's checksum
 * kernels on the host when the graph runs.  Their traces must say:
 *  - a captured chain of K kernels gets K + 1 hash sets with
 *    KTRACE_HASH_MERGE=1 (2 K without), counted in graph_hash_nodes and
 *    graph_kernel_nodes_hashed, and every digest is the CPU reference's of
 *    the buffer and the unmerged run's;
 *  - a merged node's region of the start and length of one its dependency
 *    post-hashes is read once (hash_pre_shared, fewer bytes hashed), for
 *    each dependent of a fan-out; one of the same start and another length
 *    is read for itself;
 *  - in a fork/join graph only a dependent whose one dependency is a hashed
 *    kernel node by a plain edge merges: not one after a memset, not one of
 *    two dependencies, not one after a programmatic launch edge;
 *  - a read-only input of a kernel node gets no post-hash: its post-digest
 *    is its pre-digest, flag POST_CARRIED, and equals the digest a run
 *    that post-hashes it measures; KTRACE_HASH_VERIFY=1 measures it and
 *    reports a write proof that does not hold (NOTE 262, counter), also
 *    for graph launches whose digests land only as the program exits;
 *  - a graph of conditional nodes gives the same digests, bodies included,
 *    merged or not.
 */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hashkern/ktrace_digest.h"
#include "test/unit/graph_trace.h"

#define MERGE "KTRACE_HASH_MERGE=1"

/* One traced run: its records, the checksum kernels the fake ran and the
 * bytes they read. */
struct run {
	struct recs x;
	unsigned long hash_kernels;
	unsigned long long hash_bytes;
};

/* The app's "KEY=N" line (key: "hash_kernels=", ...; gt_run_app keeps its
 * stdout); 0 when it prints none (graph_app). */
static unsigned long long app_value(const char *key)
{
	char path[PATH_MAX + 16], buf[4096];
	const char *at;
	size_t n;
	FILE *f;

	snprintf(path, sizeof path, "%s/stdout", gt_tmp_dir);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	at = strstr(buf, key);
	return at ? strtoull(at + strlen(key), NULL, 10) : 0;
}

/* Run app MODE, hashed, with one more setting (NULL: none), into trace NAME. */
static void record(const char *app, const char *mode, const char *env, const char *name, struct run *r)
{
	gt_app = app;
	gt_extra_env = env ? env : "KTRACE_QUIET=1";
	gt_run_app(mode, name, 1, 0);
	gt_extra_env = "KTRACE_QUIET=1";
	gt_app = "graph_app";
	r->hash_kernels = (unsigned long)app_value("hash_kernels=");
	r->hash_bytes = app_value("hash_bytes=");
	gt_read_recs(name, &r->x);
}

/* Region k of (graph launch, node)'s LAUNCH of nregions regions, which
 * must be hashed. */
static struct ktrace_region region_at(const struct run *r, uint64_t launch, uint32_t node, uint32_t k,
				      uint32_t nregions)
{
	struct ktrace_rec_launch l;
	struct ktrace_region g;

	assert_true(gt_graph_launch(&r->x, launch, node, &l));
	assert_true(l.flags & KTRACE_LAUNCHF_HASHED);
	assert_int_equal(l.nregions, nregions);
	ktrace_launch_region(&l, k, &g);
	assert_true((g.flags & KTRACE_REGIONF_PRE) && (g.flags & KTRACE_REGIONF_POST));
	return g;
}

/* Region 0 of (graph launch, node)'s LAUNCH of one region. */
static struct ktrace_region region0(const struct run *r, uint64_t launch, uint32_t node)
{
	return region_at(r, launch, node, 0, 1);
}

/* Region 0 of (launch, node) has the same digests and flags in a and b. */
static void assert_same_region(const struct run *a, const struct run *b, uint64_t launch, uint32_t node)
{
	struct ktrace_region ga = region0(a, launch, node), gb = region0(b, launch, node);

	assert_true(ga.pre_hash == gb.pre_hash);
	assert_true(ga.post_hash == gb.post_hash);
	assert_int_equal(ga.flags, gb.flags);
}

static void assert_nodes(const struct run *r, uint64_t hash_nodes, uint64_t kernel_nodes, unsigned launches)
{
	assert_int_equal(r->x.counters[KTRACE_CTR_GRAPH_HASH_NODES], hash_nodes);
	assert_int_equal(r->x.counters[KTRACE_CTR_GRAPH_KERNEL_NODES_HASHED], kernel_nodes);
	assert_int_equal(r->hash_kernels, hash_nodes * launches);
	assert_int_equal(r->x.counters[KTRACE_CTR_HASH_INCOMPLETE], 0);
}

/* graph_merge_app MODE merged and not, each launching its graph twice:
 * their checksum nodes (merged_nodes, plain_nodes) for `kernels` hashed
 * kernel nodes. */
static void record_pair(const char *mode, struct run *merged, struct run *plain, uint64_t merged_nodes,
			uint64_t plain_nodes, uint64_t kernels)
{
	char name[64];

	snprintf(name, sizeof name, "%.20s-merged.ktrace", mode);
	record("graph_merge_app", mode, MERGE, name, merged);
	snprintf(name, sizeof name, "%.20s-plain.ktrace", mode);
	record("graph_merge_app", mode, NULL, name, plain);
	assert_nodes(merged, merged_nodes, kernels, 2);
	assert_nodes(plain, plain_nodes, kernels, 2);
}

/* The hashed LAUNCH records of two runs, in trace order, have the same
 * regions and digests; returns how many. */
static unsigned assert_same_launches(const struct recs *a, const struct recs *b);

/* What read-once does to graph_merge_app MODE (record_pair's runs, sets
 * and kernels): `shared` regions read once merged (hash_pre_shared, none
 * unmerged), the checksum kernels reading entries[0] regions of N floats
 * per launch merged and entries[1] not, and every hashed LAUNCH of both
 * runs alike. */
static void record_shared(const char *mode, struct run *merged, struct run *plain, const uint64_t sets[2],
			  uint64_t kernels, uint64_t shared, const uint64_t entries[2])
{
	record_pair(mode, merged, plain, sets[0], sets[1], kernels);
	assert_int_equal(merged->x.counters[KTRACE_CTR_HASH_PRE_SHARED], shared);
	assert_int_equal(plain->x.counters[KTRACE_CTR_HASH_PRE_SHARED], 0);
	assert_int_equal(merged->hash_bytes, 2 * entries[0] * N * sizeof(float));
	assert_int_equal(plain->hash_bytes, 2 * entries[1] * N * sizeof(float));
	assert_int_equal(assert_same_launches(&merged->x, &plain->x), 2 * kernels);
}

/* K = 4 add_one(X) in a chain, launched twice: K + 1 sets merged, 2 K not;
 * node k of launch L sees X = i + 4 L + k.  Merged, each node's pre-digest
 * of X is its predecessor's post-digest entry (3 shared regions, counted
 * once at instantiation): 5 entries of 256 bytes per launch instead of 8. */
static void test_chain(void **state)
{
	static struct run merged, plain;

	(void)state;
	record_shared("chain 4", &merged, &plain, (const uint64_t[2]){ 5, 8 }, 4, 3, (const uint64_t[2]){ 5, 8 });
	for (uint64_t launch = 0; launch < 2; launch++)
		for (uint32_t k = 0; k < 4; k++) {
			struct ktrace_region g = region0(&merged, launch, k);
			float before = (float)(4 * launch + k);

			assert_true(g.pre_hash == gt_floats_digest(0, before, N, 0));
			assert_true(g.post_hash == gt_floats_digest(0, before + 1, N, 0));
			assert_same_region(&merged, &plain, launch, k);
		}
	gt_free_recs(&merged.x);
	gt_free_recs(&plain.x);
}

/* The digest of N floats of value v. */
static uint64_t all_digest(float v)
{
	float h[N];

	for (int i = 0; i < N; i++)
		h[i] = v;
	return ktrace_digest(h, sizeof h);
}

/* P's post set takes M1's and M2's pre-hashes (2 sets fewer: 10 of 12);
 * M3 (after a memset), J (two dependencies) and Q (a programmatic edge)
 * keep theirs.  Every digest is the buffer's. */
static void test_fork_join(void **state)
{
	static const uint32_t kernel_nodes[6] = { 0, 1, 2, 4, 5, 6 };
	static const float base[6] = { 0, 100, 200, 0, 400, 500 };
	static struct run merged, plain;

	(void)state;
	record_pair("fork", &merged, &plain, 10, 12, 6);
	for (uint64_t launch = 0; launch < 2; launch++)
		for (int k = 0; k < 6; k++) {
			uint32_t node = kernel_nodes[k];
			struct ktrace_region g = region0(&merged, launch, node);

			if (node == 4) { /* D: set to 0 before it each launch */
				assert_true(g.pre_hash == all_digest(0));
				assert_true(g.post_hash == all_digest(1));
			} else {
				assert_true(g.pre_hash == gt_floats_digest(base[k], (float)launch, N, 0));
				assert_true(g.post_hash == gt_floats_digest(base[k], (float)launch + 1, N, 0));
			}
			assert_same_region(&merged, &plain, launch, node);
		}
	gt_free_recs(&merged.x);
	gt_free_recs(&plain.x);
}

/* The digest of n floats of h from index from. */
static uint64_t floats_digest(const float *h, int from, int n)
{
	return ktrace_digest(h + from, (size_t)n * sizeof(float));
}

/* P add_one(A) with two dependents summing all of A (nondet_sum(B, A),
 * nondet_sum(C, A)): both merge into P's post set and both take their
 * pre-digest of A from P's entry (2 shared), so that set hashes A, B and C
 * once each: 4 sets of 1536 bytes per launch, against 6 sets of 2048
 * bytes.  A is a read-only input of both (its post-digest the shared
 * pre-digest).  Every digest is the CPU's and the unmerged run's. */
static void test_fanout(void **state)
{
	static struct run merged, plain;
	float b[N];

	(void)state;
	record_shared("fanout", &merged, &plain, (const uint64_t[2]){ 4, 6 }, 3, 2, (const uint64_t[2]){ 6, 8 });
	for (uint64_t launch = 0; launch < 2; launch++) {
		struct ktrace_region p = region0(&merged, launch, 0);

		assert_true(p.pre_hash == gt_floats_digest(0, (float)launch, N, 0));
		assert_true(p.post_hash == gt_floats_digest(0, (float)launch + 1, N, 0));
		for (uint32_t node = 1; node < 3; node++) {
			struct ktrace_region out = region_at(&merged, launch, node, 0, 2);
			struct ktrace_region in = region_at(&merged, launch, node, 1, 2);

			assert_true(in.pre_hash == p.post_hash);
			assert_true(in.post_hash == in.pre_hash);
			assert_true(in.flags & KTRACE_REGIONF_POST_CARRIED);
			for (int i = 0; i < N; i++)
				b[i] = 100.0f * (float)node + (float)i;
			b[0] = launch ? 2016 + 64 : b[0];
			assert_true(out.pre_hash == floats_digest(b, 0, N));
			b[0] = 2016.0f + 64.0f * (float)(launch + 1);
			assert_true(out.post_hash == floats_digest(b, 0, N));
		}
	}
	gt_free_recs(&merged.x);
	gt_free_recs(&plain.x);
}

/* P add_one(A) -> M nondet_sum(A + 32, A, 32): M's input starts where P's
 * region does but is half as long (bounded by M's output), and its output
 * starts elsewhere: both keep their own entries in P's post set (no region
 * shared, the same bytes hashed merged or not: 3 sets, 4 unmerged).  Every
 * digest is the CPU's and the unmerged run's. */
static void test_short(void **state)
{
	static struct run merged, plain;
	float a[N];

	(void)state;
	record_shared("short", &merged, &plain, (const uint64_t[2]){ 3, 4 }, 2, 0, (const uint64_t[2]){ 4, 4 });
	for (int i = 0; i < N; i++)
		a[i] = (float)i;
	for (uint64_t launch = 0; launch < 2; launch++) {
		struct ktrace_region p = region0(&merged, launch, 0);
		struct ktrace_region out = region_at(&merged, launch, 1, 0, 2);
		struct ktrace_region in = region_at(&merged, launch, 1, 1, 2);

		assert_true(p.pre_hash == floats_digest(a, 0, N));
		for (int i = 0; i < N; i++)
			a[i] += 1.0f;
		assert_true(p.post_hash == floats_digest(a, 0, N));
		assert_int_equal(p.hash_len, N * sizeof(float));
		assert_true(in.ptr == p.ptr);
		assert_int_equal(in.hash_len, N / 2 * sizeof(float));
		assert_true(in.pre_hash == floats_digest(a, 0, N / 2));
		assert_true(out.pre_hash == floats_digest(a, N / 2, N / 2));
		a[N / 2] = 0;
		for (int i = 0; i < N / 2; i++)
			a[N / 2] += a[i];
		assert_true(out.post_hash == floats_digest(a, N / 2, N / 2));
	}
	gt_free_recs(&merged.x);
	gt_free_recs(&plain.x);
}

/* add_one(A) -> kernel_a(A) -> add_one(A): kernel_a only reads A, so no
 * post-hash after it (5 sets; merged 4: kernel_a's post set hashes only
 * the next node's pre-hash; 6 with KTRACE_HASH_READONLY=0). */
static void test_read_only(void **state)
{
	static struct run on, merged, off, verify;

	(void)state;
	record("graph_merge_app", "ro", NULL, "ro-on.ktrace", &on);
	record("graph_merge_app", "ro", MERGE, "ro-merged.ktrace", &merged);
	record("graph_merge_app", "ro", "KTRACE_HASH_READONLY=0", "ro-off.ktrace", &off);
	record("graph_merge_app", "ro", "KTRACE_HASH_VERIFY=1", "ro-verify.ktrace", &verify);
	assert_nodes(&on, 5, 3, 2);
	assert_nodes(&merged, 4, 3, 2);
	assert_nodes(&off, 6, 3, 2);
	assert_nodes(&verify, 6, 3, 2);
	/* merged, kernel_a's pre-digest of A is add_one's post entry; add_one
	 * after kernel_a has its own (kernel_a post-hashes nothing) */
	assert_int_equal(merged.x.counters[KTRACE_CTR_HASH_PRE_SHARED], 1);
	assert_int_equal(on.x.counters[KTRACE_CTR_HASH_PRE_SHARED], 0);
	for (uint64_t launch = 0; launch < 2; launch++) {
		struct ktrace_region g = region0(&on, launch, 1), m = region0(&off, launch, 1);

		assert_true(g.flags & KTRACE_REGIONF_POST_CARRIED);
		assert_true(g.post_hash == g.pre_hash);
		assert_true(g.post_hash == m.post_hash);
		assert_false(m.flags & KTRACE_REGIONF_POST_CARRIED);
		assert_false(region0(&on, launch, 0).flags & KTRACE_REGIONF_POST_CARRIED);
		assert_false(region0(&on, launch, 2).flags & KTRACE_REGIONF_POST_CARRIED);
		for (uint32_t k = 0; k < 3; k++) {
			assert_same_region(&on, &merged, launch, k);
			assert_same_region(&on, &verify, launch, k);
			assert_true(region0(&on, launch, k).post_hash == region0(&off, launch, k).post_hash);
		}
	}
	assert_int_equal(on.x.counters[KTRACE_CTR_HASH_POST_CARRIED], 2);
	assert_int_equal(verify.x.counters[KTRACE_CTR_HASH_POST_CARRIED], 2);
	assert_int_equal(off.x.counters[KTRACE_CTR_HASH_POST_CARRIED], 0);
	assert_int_equal(verify.x.counters[KTRACE_CTR_HASH_READONLY_MISMATCHES], 0);
	gt_free_recs(&on.x);
	gt_free_recs(&merged.x);
	gt_free_recs(&off.x);
	gt_free_recs(&verify.x);
}

/* fake_add_one's PTX claims it only reads x: no post set at all (3 sets,
 * merged or not), add_one's post-digest recorded as its pre-digest; with
 * KTRACE_HASH_VERIFY=1 measured, and each of the 4 add_one launches
 * reported (counter, NOTE 262). */
static void test_read_only_lie(void **state)
{
	static struct run on, merged, verify;

	(void)state;
	record("graph_merge_app", "ro_lie", NULL, "lie-on.ktrace", &on);
	record("graph_merge_app", "ro_lie", MERGE, "lie-merged.ktrace", &merged);
	record("graph_merge_app", "ro_lie", "KTRACE_HASH_VERIFY=1", "lie-verify.ktrace", &verify);
	assert_nodes(&on, 3, 3, 2);
	assert_nodes(&merged, 3, 3, 2);
	for (uint64_t launch = 0; launch < 2; launch++)
		for (uint32_t k = 0; k < 3; k++) {
			struct ktrace_region g = region0(&on, launch, k), v = region0(&verify, launch, k);

			assert_true(g.flags & KTRACE_REGIONF_POST_CARRIED);
			assert_true(g.post_hash == g.pre_hash);
			assert_true(v.flags & KTRACE_REGIONF_POST_CARRIED);
			assert_true(v.pre_hash == g.pre_hash);
			assert_true((v.post_hash != v.pre_hash) == (k != 1));
			assert_same_region(&on, &merged, launch, k);
		}
	assert_int_equal(verify.x.counters[KTRACE_CTR_HASH_READONLY_MISMATCHES], 4);
	assert_int_equal(gt_count_notes(&verify.x, KTRACE_NOTE_CODE_CARRY_MISMATCH, "read-only input written"), 4);
	assert_int_equal(gt_count_notes(&on.x, KTRACE_NOTE_CODE_CARRY_MISMATCH, NULL), 0);
	gt_free_recs(&on.x);
	gt_free_recs(&merged.x);
	gt_free_recs(&verify.x);
}

/* The read-only lie again, each event query of the fake taking 200 ms: the
 * graph launches' digests land while the program exits, and the end of the
 * trace writes their records.  Each measured mismatch still has its NOTE. */
static void test_read_only_lie_at_exit(void **state)
{
	static struct run verify;

	(void)state;
	gt_extra_env2 = "FAKECUDA_QUERY_DELAY_US=200000";
	record("graph_merge_app", "ro_lie", "KTRACE_HASH_VERIFY=1", "lie-exit.ktrace", &verify);
	gt_extra_env2 = "KTRACE_QUIET=1";
	assert_nodes(&verify, 6, 3, 2); /* post sets measured */
	for (uint64_t launch = 0; launch < 2; launch++)
		for (uint32_t k = 0; k < 3; k++)
			assert_true(region0(&verify, launch, k).flags & KTRACE_REGIONF_POST_CARRIED);
	assert_int_equal(verify.x.counters[KTRACE_CTR_HASH_READONLY_MISMATCHES], 4);
	assert_int_equal(gt_count_notes(&verify.x, KTRACE_NOTE_CODE_CARRY_MISMATCH, "read-only input written"), 4);
	gt_free_recs(&verify.x);
}

/* The LAUNCH record of operation seq in x: 1, or 0 when none. */
static int launch_at(const struct recs *x, uint64_t seq, struct ktrace_rec_launch *l)
{
	for (size_t i = 0; i < x->n; i++)
		if (x->type[i] == KTRACE_REC_LAUNCH && !ktrace_decode_launch(x->rec[i], x->len[i], l) &&
		    l->launch_seq == seq)
			return 1;
	return 0;
}

/* The LAUNCH records of two runs, paired by operation number (launch_seq:
 * the diff's alignment; a graph launch's records are written when its
 * digests land, so two graph launches' records may come in either order),
 * have the same flags, regions and digests; returns how many are hashed. */
static unsigned assert_same_launches(const struct recs *a, const struct recs *b)
{
	unsigned n = 0;

	assert_int_equal(gt_count_type(a, KTRACE_REC_LAUNCH, 0), gt_count_type(b, KTRACE_REC_LAUNCH, 0));
	for (size_t i = 0; i < a->n; i++) {
		struct ktrace_rec_launch la, lb;
		struct ktrace_region ga, gb;

		if (a->type[i] != KTRACE_REC_LAUNCH)
			continue;
		assert_int_equal(ktrace_decode_launch(a->rec[i], a->len[i], &la), 0);
		assert_true(launch_at(b, la.launch_seq, &lb));
		assert_int_equal(la.flags, lb.flags);
		assert_int_equal(la.nregions, lb.nregions);
		for (uint32_t k = 0; k < la.nregions; k++) {
			ktrace_launch_region(&la, k, &ga);
			ktrace_launch_region(&lb, k, &gb);
			assert_true(ga.pre_hash == gb.pre_hash && ga.post_hash == gb.post_hash);
			assert_int_equal(ga.flags, gb.flags);
		}
		n += (la.flags & KTRACE_LAUNCHF_HASHED) != 0;
	}
	return n;
}

/* { add_one(x) -> add_one(x) -> WHILE (3 runs) { add_one(x) -> add_one(x)
 * -> loop_cond } }: the second top-level add_one merges into the first's
 * post set (one set fewer), bodies do not merge, and every record of the
 * two launches, the bodies' runs included, has the unmerged run's digests. */
static void test_conditional(void **state)
{
	static struct run merged, plain;
	struct ktrace_rec_launch l;
	struct ktrace_region g;

	(void)state;
	record("graph_app", "while_chain 3", MERGE, "cond-merged.ktrace", &merged);
	record("graph_app", "while_chain 3", NULL, "cond-plain.ktrace", &plain);
	/* kernel nodes hashed: 2 on top, 3 in the body (loop_cond's handle and counter) */
	assert_int_equal(plain.x.counters[KTRACE_CTR_GRAPH_KERNEL_NODES_HASHED], 5);
	assert_int_equal(merged.x.counters[KTRACE_CTR_GRAPH_KERNEL_NODES_HASHED], 5);
	assert_int_equal(merged.x.counters[KTRACE_CTR_GRAPH_HASH_NODES] + 1,
			 plain.x.counters[KTRACE_CTR_GRAPH_HASH_NODES]);
	/* the second top-level add_one(x) reads x once with the first's post
	 * entry; the body's add_one(x) -> add_one(x) keeps its own sets */
	assert_int_equal(merged.x.counters[KTRACE_CTR_HASH_PRE_SHARED], 1);
	assert_int_equal(plain.x.counters[KTRACE_CTR_HASH_PRE_SHARED], 0);
	/* 2 launches of 2 top-level kernels and 3 runs of 3 body kernels */
	assert_int_equal(assert_same_launches(&merged.x, &plain.x), 2 * (2 + 3 * 3));
	/* x = i + 8 L + 1 before the second top-level node of launch L */
	for (uint64_t launch = 0; launch < 2; launch++) {
		assert_true(gt_graph_launch(&merged.x, launch, 1, &l));
		ktrace_launch_region(&l, 0, &g);
		assert_true(g.pre_hash == gt_floats_digest(0, (float)(8 * launch + 1), N, 0));
	}
	gt_free_recs(&merged.x);
	gt_free_recs(&plain.x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_fork_join),
		cmocka_unit_test(test_fanout),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_read_only_lie),
		cmocka_unit_test(test_read_only_lie_at_exit),
		cmocka_unit_test(test_conditional),
	};

	return cmocka_run_group_tests(tests, gt_setup, gt_teardown);
}
