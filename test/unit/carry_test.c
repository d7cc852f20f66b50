/* test/unit/carry_test.c: carried pre-digests end to end.  build/carry_app
 * runs under LD_PRELOAD=libktrace.so with the fake driver's real-memory
 * build (kernels and ktrace's checksum kernels run on the host), and its
 * trace must carry exactly the pre-digests the rules allow
 * (docs/hashing.md, "Carried pre-digests"): along a stream's chain of
 * launches, not past a copy or memset into the buffer, a launch on another
 * stream not ordered by a host synchronisation, an untraced launch (filtered
 * or while paused), a free
 * and new allocation, a graph launch; every digest equal to the one a run
 * with KTRACE_HASH_CARRY=0 measured, one hash launch fewer per carried
 * launch; KTRACE_HASH_VERIFY=1 finds no mismatch there, and finds (a
 * counter and a NOTE) the write a kernel makes through a pointer ktrace
 * cannot see; ktrace-diff's verdict on a non-deterministic kernel whose
 * inputs are identical by a carried pre-digest says so (text and JSON).
 * Read-only inputs (docs/hashing.md, "Read-only inputs"): a region whose
 * parameter the kernel's PTX proves read-only is not post-hashed, its
 * post-digest its pre-digest, equal to the one KTRACE_HASH_READONLY=0
 * measures, and is no write for carrying; a launch with only such regions
 * and carried pre-digests runs no checksum kernel; one buffer passed as a
 * read-only and a written parameter is post-hashed; a proof that does not
 * hold is caught by KTRACE_HASH_VERIFY=1.  Runs count each launch's own
 * checksum kernels (KTRACE_HASH_MERGE=0); the chain and the read-only run
 * again with merged hash launches carry and skip alike, with the same
 * digests.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "test/run_capture.h"
#include "test/scratch.h"
#include "test/unit/preload_trace.h"

#define MAX_L KT_MAX_LAUNCHES
#define MAX_NOTE 320

static char build_dir[PATH_MAX], tmp_dir[512];

/* What a run recorded: its launches (graph nodes left out) in op order,
 * region 0 of each, the counters and the mismatch notes. */
struct run {
	unsigned n;
	struct ktrace_rec_launch l[MAX_L];
	struct ktrace_region g[MAX_L], g1[MAX_L]; /* regions 0 and 1 (if any) */
	uint64_t carried, mismatches, lost, incomplete, post_carried, ro_mismatches;
	unsigned notes;
	char note[MAX_NOTE];
	unsigned long hash_launches;
	char ro_hashes[64]; /* the ro modes: checksum kernels run by each launch, "a,b,..." */
};

/* Run carry_app MODE with the library, the real-memory driver and the
 * extra setting `env` (NULL: none); its trace read into *r. */
static void run_app(const char *mode, const char *env, struct run *r, const char *name)
{
	char app[PATH_MAX + 32];
	char *argv[] = { app, (char *)mode, NULL };
	struct kt_run out;

	kt_preload_env(build_dir, tmp_dir, "carry_app", name, app, sizeof app);
	setenv("KTRACE_KERNELS",
	       strncmp(mode, "ro", 2) ? "^fake_(hidden_add_one|add_one|nondet_sum)$" : "^fake_(kernel_a|add_one|nondet_sum)$",
	       1);
	/* checksum kernels are counted per launch here: each launch's own
	 * (merged launches are merge_test's) */
	setenv("KTRACE_HASH_MERGE", "0", 1);
	if (env)
		putenv((char *)env);
	out = kt_run_captured(tmp_dir, NULL, argv);
	unsetenv("LD_PRELOAD");
	unsetenv("KTRACE_HASH_MERGE");
	if (env) {
		char var[64];

		snprintf(var, sizeof var, "%.*s", (int)(strchr(env, '=') - env), env);
		unsetenv(var);
	}
	assert_int_equal(out.status, 0);
	assert_non_null(strstr(out.out, "OK"));
	assert_int_equal(sscanf(strstr(out.out, "hash_launches="), "hash_launches=%lu", &r->hash_launches), 1);
	if (strstr(out.out, "ro_hashes="))
		assert_int_equal(sscanf(strstr(out.out, "ro_hashes="), "ro_hashes=%63s", r->ro_hashes), 1);
	free(out.out);
	free(out.err);
}

static void take_counters(struct run *r, const void *rec, size_t len)
{
	uint64_t v[64] = { 0 };

	kt_counter_values(rec, len, v);
	r->carried = v[KTRACE_CTR_HASH_PRE_CARRIED];
	r->mismatches = v[KTRACE_CTR_HASH_CARRY_MISMATCHES];
	r->lost = v[KTRACE_CTR_HASH_CARRY_LOST];
	r->incomplete = v[KTRACE_CTR_HASH_INCOMPLETE];
	r->post_carried = v[KTRACE_CTR_HASH_POST_CARRIED];
	r->ro_mismatches = v[KTRACE_CTR_HASH_READONLY_MISMATCHES];
}

/* One record of a run's trace into *r (kt_trace_each). */
static void take_record(void *ctx, uint16_t type, const void *rec, size_t len)
{
	struct run *r = ctx;
	struct ktrace_rec_note nt;

	if (type == KTRACE_REC_LAUNCH)
		kt_launches_take(&r->n, r->l, r->g, r->g1, rec, len, 1);
	else if (type == KTRACE_REC_COUNTERS)
		take_counters(r, rec, len);
	else if (type == KTRACE_REC_NOTE && !ktrace_decode_note(rec, len, &nt) &&
		 nt.code == KTRACE_NOTE_CODE_CARRY_MISMATCH && r->notes++ == 0)
		snprintf(r->note, sizeof r->note, "%.*s", (int)nt.text.len, nt.text.ptr);
}

static void read_trace(struct run *r, const char *name)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
	kt_trace_each(path, take_record, r);
}

static void record_run(const char *mode, const char *env, struct run *r)
{
	memset(r, 0, sizeof *r);
	run_app(mode, env, r, "carry.ktrace");
	read_trace(r, "carry.ktrace");
}

/* Launch k carried its pre-digest from launch `from` (-1: measured it). */
static void assert_carry(const struct run *r, unsigned k, int from)
{
	const struct ktrace_region *g = &r->g[k];

	assert_true(g->flags & KTRACE_REGIONF_PRE);
	assert_true(g->flags & KTRACE_REGIONF_POST);
	if (from < 0) {
		if (g->flags & KTRACE_REGIONF_PRE_CARRIED)
			fail_msg("L%u carried its pre-digest from op %llu", k, (unsigned long long)g->pre_from);
		return;
	}
	if (!(g->flags & KTRACE_REGIONF_PRE_CARRIED))
		fail_msg("L%u measured its pre-digest, expected it carried from L%d", k, from);
	assert_true(r->l[k].flags & KTRACE_LAUNCHF_CARRIED);
	assert_int_equal(g->pre_from, r->l[from].launch_seq);
	assert_true(g->pre_hash == r->g[from].post_hash);
}

/* The chain's launches: from which each carries (docs in carry_app.c). */
static const int chain_from[19] = { -1, 0, 1, -1, 3, 4, -1, -1, -1, 8, -1, 10, -1, 12, -1, -1, 15, -1, 17 };

static void test_chain(void **state)
{
	static struct run on, off, verify, merged;
	unsigned carried = 0;

	(void)state;
	record_run("chain", NULL, &on);
	record_run("chain", "KTRACE_HASH_MERGE=1", &merged);
	record_run("chain", "KTRACE_HASH_CARRY=0", &off);
	record_run("chain", "KTRACE_HASH_VERIFY=1", &verify);
	assert_int_equal(on.n, 19);
	assert_int_equal(off.n, 19);
	for (unsigned k = 0; k < 19; k++) {
		assert_carry(&on, k, chain_from[k]);
		assert_carry(&verify, k, chain_from[k]);
		assert_carry(&off, k, -1);
		assert_carry(&merged, k, chain_from[k]); /* merged hash launches carry alike */
		assert_true(merged.g[k].pre_hash == off.g[k].pre_hash);
		assert_true(merged.g[k].post_hash == off.g[k].post_hash);
		/* carried and measured digests alike */
		assert_true(on.g[k].pre_hash == off.g[k].pre_hash);
		assert_true(on.g[k].post_hash == off.g[k].post_hash);
		assert_true(verify.g[k].pre_hash == off.g[k].pre_hash);
		carried += chain_from[k] >= 0;
	}
	assert_int_equal(on.carried, carried);
	assert_int_equal(off.carried, 0);
	assert_int_equal(verify.carried, carried);
	assert_int_equal(verify.mismatches, 0);
	assert_int_equal(verify.notes, 0);
	assert_int_equal(on.lost, 0);
	/* every hash launched landed (none waited for in vain at the end) */
	assert_int_equal(on.incomplete + off.incomplete + verify.incomplete + merged.incomplete, 0);
	assert_int_equal(merged.carried, carried);
	assert_int_equal(merged.lost, 0);
	assert_true(merged.hash_launches <= on.hash_launches);
	/* a carried pre-digest is one checksum launch fewer; measuring them
	 * all again costs as much as not carrying */
	assert_int_equal(off.hash_launches - on.hash_launches, carried);
	assert_int_equal(verify.hash_launches, off.hash_launches);
}

/* A kernel writes A through a pointer held in device memory: ktrace carries
 * L1's digest into L3, stale; KTRACE_HASH_VERIFY measures it, records the
 * measured one and reports the mismatch. */
static void test_hidden_writer(void **state)
{
	static struct run on, verify;
	char want[128];

	(void)state;
	record_run("hidden", NULL, &on);
	record_run("hidden", "KTRACE_HASH_VERIFY=1", &verify);
	assert_int_equal(on.n, 4);
	assert_carry(&on, 3, 1); /* the carried digest misses the hidden write */
	assert_int_equal(on.mismatches, 0);
	assert_int_equal(verify.n, 4);
	assert_true(verify.g[3].flags & KTRACE_REGIONF_PRE_CARRIED);
	assert_true(verify.g[3].pre_hash != verify.g[1].post_hash);
	assert_int_equal(verify.mismatches, 1);
	assert_int_equal(verify.notes, 1);
	snprintf(want, sizeof want, "op_seq %llu region", (unsigned long long)verify.l[3].launch_seq);
	assert_non_null(strstr(verify.note, want));
	snprintf(want, sizeof want, "from op_seq %llu", (unsigned long long)verify.l[1].launch_seq);
	assert_non_null(strstr(verify.note, want));
}

/* A launch ktrace does not trace, while paused or filtered, between two
 * hashed launches of the buffer: the second measures its pre-digest, equal
 * to the one a run without carrying measures. */
static void test_untraced_between(void **state)
{
	static const int from[6] = { -1, 0, -1, 2, -1, 4 };
	static struct run on, off;

	(void)state;
	record_run("paused", NULL, &on);
	record_run("paused", "KTRACE_HASH_CARRY=0", &off);
	assert_int_equal(on.n, 6);
	assert_int_equal(off.n, 6);
	for (unsigned k = 0; k < 6; k++) {
		assert_carry(&on, k, from[k]);
		assert_true(on.g[k].pre_hash == off.g[k].pre_hash);
		assert_true(on.g[k].post_hash == off.g[k].post_hash);
	}
	assert_int_equal(on.carried, 3);
}

static char *diff_runs(const char *na, const char *nb, int json);

/* Region g of launch k is a read-only input: post-digest = pre-digest,
 * flagged POST_CARRIED (post 0: measured, not flagged). */
static void assert_post_carried(const struct ktrace_region *g, int post, unsigned k)
{
	assert_true(g->flags & KTRACE_REGIONF_PRE);
	assert_true(g->flags & KTRACE_REGIONF_POST);
	if (!post != !(g->flags & KTRACE_REGIONF_POST_CARRIED))
		fail_msg("L%u: post-digest %s, expected %s", k, post ? "measured" : "carried",
			 post ? "carried" : "measured");
	if (post)
		assert_true(g->post_hash == g->pre_hash);
}

/* L1 nondet_sum(O, A) and L2 kernel_a(A) only read A: neither post-hashes
 * it, L2 runs no checksum kernel at all (A's pre-digest carried from L0,
 * not from L1: a read is no write), and L3 carries A's from L0 too; every
 * digest equal to a KTRACE_HASH_READONLY=0 run's, which measures them. */
static void test_read_only(void **state)
{
	static struct run on, off, verify, merged;
	char *text;

	(void)state;
	record_run("ro", NULL, &on);
	record_run("ro", "KTRACE_HASH_MERGE=1", &merged);
	record_run("ro", "KTRACE_HASH_READONLY=0", &off);
	record_run("ro", "KTRACE_HASH_VERIFY=1", &verify);
	assert_int_equal(on.n, 4);
	assert_int_equal(off.n, 4);
	assert_post_carried(&on.g[0], 0, 0);   /* add_one writes A */
	assert_post_carried(&on.g[1], 0, 1);   /* O, written */
	assert_post_carried(&on.g1[1], 1, 1);  /* A, read */
	assert_post_carried(&on.g[2], 1, 2);
	assert_post_carried(&on.g[3], 0, 3);
	for (unsigned k = 0; k < 4; k++) {
		assert_post_carried(&off.g[k], 0, k);
		assert_true(on.g[k].pre_hash == off.g[k].pre_hash);
		assert_true(on.g[k].post_hash == off.g[k].post_hash);
		assert_true(verify.g[k].post_hash == off.g[k].post_hash);
		/* merged hash launches: the same digests, the same read-only inputs */
		assert_true(merged.g[k].pre_hash == off.g[k].pre_hash);
		assert_true(merged.g[k].post_hash == off.g[k].post_hash);
		assert_int_equal(merged.g[k].flags, on.g[k].flags);
		assert_int_equal(merged.g1[k].flags, on.g1[k].flags);
	}
	assert_true(on.g1[1].post_hash == off.g1[1].post_hash);
	/* the carry table keeps L0 as A's last writer */
	assert_carry(&on, 3, 0);
	assert_true(on.g[2].flags & KTRACE_REGIONF_PRE_CARRIED);
	assert_int_equal(on.g[2].pre_from, on.l[0].launch_seq);
	assert_int_equal(off.g[3].pre_from, off.l[2].launch_seq);
	/* checksum kernels per launch: L1 post-hashes O alone, L2 none */
	assert_string_equal(on.ro_hashes, "2,2,0,1");
	assert_string_equal(off.ro_hashes, "2,2,1,1");
	assert_int_equal(on.post_carried, 2);
	assert_int_equal(off.post_carried, 0);
	/* verify measures the two skipped post-hashes: they hold */
	assert_post_carried(&verify.g1[1], 1, 1);
	assert_post_carried(&verify.g[2], 1, 2);
	assert_int_equal(verify.post_carried, 2);
	assert_int_equal(verify.ro_mismatches + verify.mismatches + verify.notes, 0);
	assert_int_equal(on.incomplete + off.incomplete + verify.incomplete, 0);
	/* ktrace-diff finds the two runs identical: a carried post-digest is a digest */
	run_app("ro", NULL, &on, "ro-on.ktrace");
	run_app("ro", "KTRACE_HASH_READONLY=0", &off, "ro-off.ktrace");
	text = diff_runs("ro-on.ktrace", "ro-off.ktrace", 0);
	assert_non_null(strstr(text, "result: identical (4 launches compared)"));
	free(text);
}

/* L1 nondet_sum(A, A): A is read-only as `in` but written as `out`; both
 * regions are post-hashed, and L2 carries from L1. */
static void test_read_only_in_place(void **state)
{
	static struct run on, off;

	(void)state;
	record_run("ro_inplace", NULL, &on);
	record_run("ro_inplace", "KTRACE_HASH_READONLY=0", &off);
	assert_int_equal(on.n, 3);
	assert_post_carried(&on.g[1], 0, 1);
	assert_post_carried(&on.g1[1], 0, 1);
	assert_true(on.g1[1].post_hash != on.g1[1].pre_hash); /* the kernel wrote A */
	assert_true(on.g1[1].post_hash == off.g1[1].post_hash);
	assert_carry(&on, 2, 1);
	assert_int_equal(on.post_carried, 0);
	assert_string_equal(on.ro_hashes, off.ro_hashes);
}

/* fake_add_one's PTX claims it only reads x, but it adds one: without
 * verification the record says A unchanged; KTRACE_HASH_VERIFY=1 measures
 * the post-digests, records them and reports each launch (counter, NOTE). */
static void test_read_only_lie(void **state)
{
	static struct run on, verify;
	char want[64];

	(void)state;
	record_run("ro_lie", NULL, &on);
	record_run("ro_lie", "KTRACE_HASH_VERIFY=1", &verify);
	assert_int_equal(on.n, 2);
	assert_post_carried(&on.g[0], 1, 0);
	assert_string_equal(on.ro_hashes, "1,1"); /* no post-hash; L1 measures (L0 was no writer) */
	assert_int_equal(on.ro_mismatches, 0);
	assert_int_equal(verify.n, 2);
	for (unsigned k = 0; k < 2; k++) {
		assert_true(verify.g[k].flags & KTRACE_REGIONF_POST_CARRIED);
		assert_true(verify.g[k].post_hash != verify.g[k].pre_hash);
	}
	assert_true(verify.g[0].post_hash == verify.g[1].pre_hash);
	assert_int_equal(verify.ro_mismatches, 2);
	assert_int_equal(verify.mismatches, 0);
	assert_int_equal(verify.notes, 2);
	assert_non_null(strstr(verify.note, "read-only input written by the launch"));
	snprintf(want, sizeof want, "op_seq %llu region", (unsigned long long)verify.l[0].launch_seq);
	assert_non_null(strstr(verify.note, want));
}

/* ktrace-diff of the runs whose traces are named na and nb (json: --json);
 * its output. */
static char *diff_runs(const char *na, const char *nb, int json)
{
	char tool[PATH_MAX + 32], a[600], b[600];
	char *argv[] = { tool, a, b, json ? (char *)"--json" : NULL, NULL };
	struct kt_run out;

	snprintf(tool, sizeof tool, "%s/ktrace-diff", build_dir);
	snprintf(a, sizeof a, "%s/%s", tmp_dir, na);
	snprintf(b, sizeof b, "%s/%s", tmp_dir, nb);
	out = kt_run_captured(tmp_dir, NULL, argv);
	free(out.err);
	return out.out;
}

/* fake_nondet_sum sums A in another order in each run; its inputs are
 * identical, A's by the pre-digest carried from the add_one before it:
 * the verdict says the kernel is non-deterministic, and that one identical
 * input rests on a carried digest. */
static void test_diff_carried(void **state)
{
	static struct run a, b;
	char *text, *json;

	(void)state;
	run_app("nondet", "FAKECUDA_NONDET_SEED=1", &a, "nondet-a.ktrace");
	run_app("nondet", "FAKECUDA_NONDET_SEED=2", &b, "nondet-b.ktrace");
	read_trace(&a, "nondet-a.ktrace");
	assert_int_equal(a.n, 3);
	/* O, first touched, measured; A carried from L1 */
	assert_false(a.g[2].flags & KTRACE_REGIONF_PRE_CARRIED);
	assert_true(a.g1[2].flags & KTRACE_REGIONF_PRE_CARRIED);
	assert_int_equal(a.g1[2].pre_from, a.l[1].launch_seq);
	text = diff_runs("nondet-a.ktrace", "nondet-b.ktrace", 0);
	json = diff_runs("nondet-a.ktrace", "nondet-b.ktrace", 1);
	assert_non_null(strstr(text, "all inputs identical"));
	assert_non_null(strstr(text, "of those, 1 identical by a carried pre-digest"));
	assert_non_null(strstr(json, "\"inputs_equal_carried\": 1"));
	free(text);
	free(json);
}

static int setup(void **state)
{
	(void)state;
	return kt_trace_dirs(build_dir, tmp_dir, sizeof tmp_dir, "carry");
}

static int teardown(void **state)
{
	(void)state;
	return kt_trace_dirs_remove(tmp_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_hidden_writer),
		cmocka_unit_test(test_untraced_between),
		cmocka_unit_test(test_diff_carried),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_read_only_in_place),
		cmocka_unit_test(test_read_only_lie),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
