/* test/unit/replay_spec_test.c: the KTRACE_REPLAY spec and the launch matcher
 * (interpose/replay/replay_spec.c).
 *
 * Good specs with defaults and every key (rank=N too: -1 when absent); bad ones give one line naming
 * KTRACE_REPLAY and what is wrong.  The matcher picks exactly the N-th launch
 * of the kernel, by name until its handle is known and by handle after,
 * including when several threads launch at once.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/replay/replay.h"

static void test_spec_defaults(void **state)
{
	struct ktrace_replay_spec s;
	char err[256] = "";

	(void)state;
	assert_int_equal(ktrace_replay_spec_parse("kernel=_Z3fooPfi", &s, err, sizeof(err)), 0);
	assert_string_equal(s.kernel, "_Z3fooPfi");
	assert_int_equal(s.occurrence, 0);
	assert_int_equal(s.runs, KTRACE_REPLAY_RUNS_DEFAULT);
	assert_int_equal(s.runs, 8);
	assert_int_equal(s.budget, KTRACE_REPLAY_BUDGET_DEFAULT);
	assert_int_equal(s.host_budget, 0);
	assert_int_equal(s.rank, -1);
	ktrace_replay_spec_free(&s);
	assert_null(s.kernel);
}

static void test_spec_all_keys(void **state)
{
	struct ktrace_replay_spec s;
	char err[256] = "";

	(void)state;
	assert_int_equal(ktrace_replay_spec_parse("runs=3,budget=512M,kernel=triton_poi_fused_add_0,"
						  "host_budget=2G,occurrence=17,rank=3", &s, err, sizeof(err)), 0);
	assert_string_equal(s.kernel, "triton_poi_fused_add_0");
	assert_int_equal(s.rank, 3);
	assert_int_equal(s.occurrence, 17);
	assert_int_equal(s.runs, 3);
	assert_int_equal(s.budget, 512ull << 20);
	assert_int_equal(s.host_budget, 2ull << 30);
	ktrace_replay_spec_free(&s);

	assert_int_equal(ktrace_replay_spec_parse("kernel=k,budget=64K,runs=1000", &s, err, sizeof(err)), 0);
	assert_int_equal(s.budget, 64 << 10);
	assert_int_equal(s.runs, 1000);
	ktrace_replay_spec_free(&s);
	assert_int_equal(ktrace_replay_spec_parse("kernel=k,budget=4096,occurrence=18446744073709551615", &s, err,
						  sizeof(err)), 0);
	assert_int_equal(s.budget, 4096);
	assert_true(s.occurrence == UINT64_MAX);
	ktrace_replay_spec_free(&s);
}

struct bad_spec {
	const char *spec;
	const char *mentions;       /* a piece of the message */
};

static void test_spec_bad(void **state)
{
	static const struct bad_spec bad[] = {
		{ "", "expected kernel=NAME" },
		{ "occurrence=3", "no kernel=NAME" },
		{ "kernel=", "empty value" },
		{ "kernel=a,kernel=b", "given twice" },
		{ "kernel=a,,runs=2", "empty" },
		{ "kernel=a,", "empty" },
		{ ",kernel=a", "empty" },
		{ "kernel=a,runs=0", "1 to 1000" },
		{ "kernel=a,runs=1001", "1 to 1000" },
		{ "kernel=a,runs=-1", "1 to 1000" },
		{ "kernel=a,runs=8x", "1 to 1000" },
		{ "kernel=a,occurrence=x", "launch number" },
		{ "kernel=a,occurrence=99999999999999999999", "launch number" },
		{ "kernel=a,budget=12Q", "budget '12Q'" },
		{ "kernel=a,budget=0", "must not be 0" },
		{ "kernel=a,budget=99999999999T", "budget" },
		{ "kernel=a,host_budget=x", "host_budget 'x'" },
		{ "kernel=a,rank=-1", "rank '-1': expected a job rank" },
		{ "kernel=a,rank=2147483648", "job rank" },
		{ "kernel=a,rank=1,rank=2", "given twice" },
		{ "kernel=a,colour=red", "unknown" },
		{ "kernel=a,runs", "expected key=value" },
		{ "kernel=a, runs=2", "unknown" },
		{ "kernel=a,\x1b[31m=1", "\\x1b" },
		{ "kernel=a,graph_exec=1,node=3", "one is missing" },
		{ "kernel=a,iteration=2", "one is missing" },
		{ "kernel=a,outer=2", "one is missing" },
		{ "kernel=a,graph_exec=1,graph_launch=0,node=3,iteration=x", "iteration 'x': expected a number" },
		{ "kernel=a,graph_exec=1,graph_launch=0,node=4294967295,iteration=1", "too large" },
		{ "kernel=a,graph_exec=1,graph_launch=0,node=3,iteration=1,iteration=2", "given twice" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ktrace_replay_spec s;
		char err[512] = "";

		assert_int_equal(ktrace_replay_spec_parse(bad[i].spec, &s, err, sizeof(err)), -1);
		assert_null(s.kernel);
		assert_true(strncmp(err, "KTRACE_REPLAY", 13) == 0);
		assert_null(strchr(err, '\n'));
		assert_null(strchr(err, '\x1b'));
		if (!strstr(err, bad[i].mentions))
			fail_msg("spec '%s': message '%s' lacks '%s'", bad[i].spec, err, bad[i].mentions);
	}
}

static void test_spec_long_value(void **state)
{
	static char spec[10000];
	struct ktrace_replay_spec s;
	char err[256];

	(void)state;
	memcpy(spec, "kernel=", 7);
	memset(spec + 7, 'x', sizeof(spec) - 8);
	spec[sizeof(spec) - 1] = '\0';
	assert_int_equal(ktrace_replay_spec_parse(spec, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "too long"));
	assert_true(strlen(err) < sizeof(err));
	assert_int_equal(ktrace_replay_spec_parse(NULL, &s, err, sizeof(err)), -1);
}

/* A kernel node inside a conditional body: its graph launch and iteration. */
static void test_spec_body(void **state)
{
	struct ktrace_replay_spec s;
	char err[512] = "";

	(void)state;
	assert_int_equal(ktrace_replay_spec_parse("kernel=k", &s, err, sizeof(err)), 0);
	assert_int_equal(s.body, 0);
	assert_true(s.outer == KTRACE_REPLAY_NO_OUTER);
	ktrace_replay_spec_free(&s);
	assert_int_equal(ktrace_replay_spec_parse("kernel=k,occurrence=5,graph_exec=2,graph_launch=7,node=4,iteration=3",
						  &s, err, sizeof(err)), 0);
	assert_int_equal(s.body, 1);
	assert_int_equal(s.occurrence, 5);
	assert_int_equal(s.graph_exec, 2);
	assert_int_equal(s.graph_launch, 7);
	assert_int_equal(s.node, 4);
	assert_int_equal(s.iteration, 3);
	assert_true(s.outer == KTRACE_REPLAY_NO_OUTER);
	ktrace_replay_spec_free(&s);
	assert_int_equal(ktrace_replay_spec_parse("outer=1,iteration=0,node=0,graph_launch=0,graph_exec=1,kernel=k",
						  &s, err, sizeof(err)), 0);
	assert_int_equal(s.body, 1);
	assert_int_equal(s.outer, 1);
	ktrace_replay_spec_free(&s);
	/* a top-level node: no iteration, or iteration=none */
	assert_int_equal(ktrace_replay_spec_parse("kernel=k,graph_exec=1,graph_launch=2,node=0", &s, err, sizeof(err)), 0);
	assert_int_equal(s.body, 1);
	assert_true(s.iteration == KTRACE_REPLAY_TOP_LEVEL);
	ktrace_replay_spec_free(&s);
	assert_int_equal(ktrace_replay_spec_parse("kernel=k,graph_exec=1,graph_launch=2,node=0,iteration=none", &s, err,
						  sizeof(err)), 0);
	assert_true(s.iteration == KTRACE_REPLAY_TOP_LEVEL);
	ktrace_replay_spec_free(&s);
}

/* ---- matcher ---------------------------------------------------------------- */

static char kernel_a, kernel_b, kernel_a_again;  /* handles: their addresses */

static void test_matcher_sequence(void **state)
{
	struct ktrace_replay_matcher m;
	int hits = 0;

	(void)state;
	ktrace_replay_matcher_init(&m, "_Z1av", 2);
	/* Other kernels before the first launch of the target are compared by name. */
	assert_int_equal(ktrace_replay_match(&m, &kernel_b, "_Z1bv"), 0);
	assert_int_equal(ktrace_replay_match(&m, &kernel_b, NULL), 0);
	assert_int_equal(ktrace_replay_match(&m, NULL, "_Z1av"), 0);
	assert_null(atomic_load(&m.handle));
	assert_int_equal(atomic_load(&m.seen), 0);
	/* Occurrences 0, 1, 2 (the candidate), 3. */
	hits += ktrace_replay_match(&m, &kernel_a, "_Z1av");
	assert_ptr_equal(atomic_load(&m.handle), &kernel_a);
	assert_int_equal(ktrace_replay_match(&m, &kernel_b, "_Z1bv"), 0);
	hits += ktrace_replay_match(&m, &kernel_a, "_Z1av");
	assert_int_equal(hits, 0);
	assert_int_equal(ktrace_replay_match(&m, &kernel_a, "_Z1av"), 1);
	assert_int_equal(ktrace_replay_match(&m, &kernel_a, "_Z1av"), 0);
	/* After resolution: the handle alone decides (the name is not looked at). */
	assert_int_equal(ktrace_replay_match(&m, &kernel_a, NULL), 0);
	assert_int_equal(ktrace_replay_match(&m, &kernel_a_again, "_Z1av"), 0);
	assert_int_equal(atomic_load(&m.seen), 5);
}

static void test_matcher_first_occurrence(void **state)
{
	struct ktrace_replay_matcher m;

	(void)state;
	ktrace_replay_matcher_init(&m, "k", 0);
	assert_int_equal(ktrace_replay_match(&m, &kernel_b, "kk"), 0);
	assert_int_equal(ktrace_replay_match(&m, &kernel_b, "K"), 0);
	assert_int_equal(ktrace_replay_match(&m, &kernel_a, "k"), 1);
	assert_int_equal(ktrace_replay_match(&m, &kernel_a, "k"), 0);
}

#define THREADS 8
#define LAUNCHES_PER_THREAD 20000

struct worker {
	struct ktrace_replay_matcher *m;
	pthread_barrier_t *start;
	unsigned hits, launches_a;
};

static void *launch_loop(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->start);
	for (unsigned i = 0; i < LAUNCHES_PER_THREAD; i++) {
		int is_a = (i % 3) != 0;
		int hit = ktrace_replay_match(w->m, is_a ? (const void *)&kernel_a : (const void *)&kernel_b,
					      is_a ? "_Z1av" : "_Z1bv");

		w->launches_a += (unsigned)is_a;
		if (hit) {
			w->hits++;
			assert_true(is_a);
		}
	}
	return NULL;
}

static void test_matcher_threads(void **state)
{
	/* 8 threads x 13333 launches of the kernel: 106664 occurrences, 0..106663. */
	static const uint64_t occurrences[] = { 0, 1, 50000, 106663, 106664, 1000000 };

	(void)state;
	for (size_t o = 0; o < sizeof(occurrences) / sizeof(occurrences[0]); o++) {
		uint64_t occurrence = occurrences[o];
		struct ktrace_replay_matcher m;
		struct worker w[THREADS];
		pthread_t t[THREADS];
		pthread_barrier_t start;
		unsigned hits = 0, launches_a = 0;

		ktrace_replay_matcher_init(&m, "_Z1av", occurrence);
		pthread_barrier_init(&start, NULL, THREADS);
		for (int i = 0; i < THREADS; i++) {
			w[i] = (struct worker){ .m = &m, .start = &start };
			assert_int_equal(pthread_create(&t[i], NULL, launch_loop, &w[i]), 0);
		}
		for (int i = 0; i < THREADS; i++) {
			pthread_join(t[i], NULL);
			hits += w[i].hits;
			launches_a += w[i].launches_a;
		}
		pthread_barrier_destroy(&start);
		/* Every launch of the kernel counted once; exactly one is the candidate. */
		assert_int_equal(launches_a, 106664);
		assert_int_equal(atomic_load(&m.seen), launches_a);
		assert_int_equal(hits, occurrence < launches_a ? 1 : 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_defaults),
		cmocka_unit_test(test_spec_all_keys),
		cmocka_unit_test(test_spec_bad),
		cmocka_unit_test(test_spec_long_value),
		cmocka_unit_test(test_spec_body),
		cmocka_unit_test(test_matcher_sequence),
		cmocka_unit_test(test_matcher_first_occurrence),
		cmocka_unit_test(test_matcher_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
