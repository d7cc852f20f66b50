/* test/unit/merge_test.c: merged hash launches end to end (docs/hashing.md,
 * "Merged hash launches").  build/merge_app runs under LD_PRELOAD=libktrace.so
 * with the fake driver's real-memory build (kernels and ktrace's checksum
 * kernels run on the host at their launch), with KTRACE_HASH_CARRY=0 so that
 * every pre-hash is measured and can share a launch.  Checked: a chain of
 * launches on one stream costs one checksum launch per launch, plus one, and
 * gives every launch the CPU digests of its buffer before and after, the
 * same as KTRACE_HASH_MERGE=0 (and as merging with carried pre-digests); a
 * memset, a copy, an event record, a launch on another stream, a host
 * function, a stream synchronisation, a query and a launch ktrace does not
 * trace after a launch each launch its held post-hash first (the post-digest is of the launch's output, not
 * of what came after); the background thread launches a held post-hash
 * while the program makes no driver call; fork; the exit drain.
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
#include "hashkern/ktrace_digest.h"
#include "test/run_capture.h"
#include "test/scratch.h"
#include "test/unit/preload_trace.h"

#define N 1024
#define MAX_L KT_MAX_LAUNCHES

static char build_dir[PATH_MAX], tmp_dir[512];

/* What a run recorded: its launches in op order (region 0 of each: A), the
 * counters, what the program printed. */
struct run {
	unsigned n;
	struct ktrace_rec_launch l[MAX_L];
	struct ktrace_region g[MAX_L], g1[MAX_L];
	uint64_t hash_launches, merged, flushed, incomplete;
	uint64_t ctr[64];     /* every counter, by id */
	unsigned long app_hash_launches;
	int poller_flush;
};

/* Run merge_app MODE with the library, the real-memory driver, every
 * pre-hash measured and the extra setting env (NULL: none); its trace read
 * into *r. */
static void run_app(const char *mode, const char *env, struct run *r)
{
	char app[PATH_MAX + 32];
	char *argv[] = { app, (char *)mode, NULL };
	struct kt_run out;
	const char *p;

	kt_preload_env(build_dir, tmp_dir, "merge_app", "merge.ktrace", app, sizeof app);
	setenv("KTRACE_HASH_CARRY", "0", 1);
	setenv("KTRACE_HASH_MERGE", "1", 1); /* off by default: on unless env says 0 */
	setenv("KTRACE_KERNELS", "^fake_add_one$", 1);
	if (env)
		putenv((char *)env);
	out = kt_run_captured(tmp_dir, NULL, argv);
	unsetenv("LD_PRELOAD");
	unsetenv("KTRACE_HASH_CARRY");
	unsetenv("KTRACE_HASH_MERGE");
	unsetenv("KTRACE_KERNELS");
	if (out.status != 0 || !strstr(out.out, "OK"))
		fail_msg("merge_app %s: status %d, output %s, errors %s", mode, out.status, out.out, out.err);
	assert_int_equal(sscanf(strstr(out.out, "hash_launches="), "hash_launches=%lu", &r->app_hash_launches), 1);
	p = strstr(out.out, "poller_flush=");
	r->poller_flush = p ? atoi(p + strlen("poller_flush=")) : -1;
	free(out.out);
	free(out.err);
}

static void take_counters(struct run *r, const void *rec, size_t len)
{
	uint64_t v[64] = { 0 };

	kt_counter_values(rec, len, v);
	memcpy(r->ctr, v, sizeof r->ctr);
	r->hash_launches = v[KTRACE_CTR_HASH_LAUNCHES];
	r->merged = v[KTRACE_CTR_HASH_MERGED];
	r->flushed = v[KTRACE_CTR_HASH_POST_FLUSHED];
	r->incomplete = v[KTRACE_CTR_HASH_INCOMPLETE];
}

/* One record of a run's trace into *r (kt_trace_each). */
static void take_record(void *ctx, uint16_t type, const void *rec, size_t len)
{
	struct run *r = ctx;

	if (type == KTRACE_REC_LAUNCH)
		kt_launches_take(&r->n, r->l, r->g, r->g1, rec, len, 0);
	else if (type == KTRACE_REC_COUNTERS)
		take_counters(r, rec, len);
}

static void record_run(const char *mode, const char *env, struct run *r)
{
	char path[PATH_MAX + 32];

	memset(r, 0, sizeof *r);
	run_app(mode, env, r);
	snprintf(path, sizeof path, "%s/merge.ktrace", tmp_dir);
	kt_trace_each(path, take_record, r);
	assert_int_equal(r->incomplete, 0);
}

/* KT64V1 of A holding v in every float. */
static uint64_t digest_of(float v)
{
	static float buf[N];

	for (int i = 0; i < N; i++)
		buf[i] = v;
	return ktrace_digest(buf, sizeof buf);
}

/* Launch k of r found A holding pre and left it holding post. */
static void assert_digests(const struct run *r, unsigned k, float pre, float post)
{
	const struct ktrace_region *g = &r->g[k];

	assert_true(g->flags & KTRACE_REGIONF_PRE);
	assert_true(g->flags & KTRACE_REGIONF_POST);
	if (g->pre_hash != digest_of(pre))
		fail_msg("L%u: pre-digest %016llx is not that of %g", k, (unsigned long long)g->pre_hash, pre);
	if (g->post_hash != digest_of(post))
		fail_msg("L%u: post-digest %016llx is not that of %g", k, (unsigned long long)g->post_hash, post);
}

/* Every launch of a and b has the same digests. */
static void assert_same_digests(const struct run *a, const struct run *b)
{
	assert_int_equal(a->n, b->n);
	for (unsigned k = 0; k < a->n; k++) {
		assert_true(a->g[k].pre_hash == b->g[k].pre_hash);
		assert_true(a->g[k].post_hash == b->g[k].post_hash);
		assert_int_equal(a->g[k].flags & (KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST),
				 b->g[k].flags & (KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST));
	}
}

/* 16 launches on one stream: 17 checksum launches (the first pre-hash, 15
 * merged, the last post-hash launched by the exit drain) instead of 32,
 * with the CPU digests and those of KTRACE_HASH_MERGE=0.  A machine under
 * load may keep the program from its next launch past the hold's bound:
 * each post-hash the background thread launches alone costs one more. */
static void test_chain(void **state)
{
	static struct run on, off, carried;

	(void)state;
	record_run("chain", NULL, &on);
	record_run("chain", "KTRACE_HASH_MERGE=0", &off);
	record_run("chain", "KTRACE_HASH_CARRY=1", &carried);
	assert_int_equal(on.n, 16);
	for (unsigned k = 0; k < 16; k++)
		assert_digests(&on, k, 1.0f + (float)k, 2.0f + (float)k);
	assert_same_digests(&on, &off);
	assert_same_digests(&on, &carried);
	assert_int_equal(on.merged + on.flushed, 16);  /* each post-hash once */
	/* each merged launch read A once, for the post- and the pre-digest */
	assert_int_equal(on.ctr[KTRACE_CTR_HASH_PRE_SHARED], on.merged);
	assert_int_equal(on.ctr[KTRACE_CTR_HASH_BYTES], (16 + on.flushed) * N * sizeof(float));
	assert_true(on.flushed >= 1);                   /* the last one, at the latest by the exit drain */
	assert_true(on.merged >= 8);
	assert_int_equal(on.hash_launches, 16 + on.flushed); /* a pre-hash each, the lone post-hashes */
	/* the program printed before it exited: the last post-hash may come after */
	assert_true(on.app_hash_launches + 1 >= on.hash_launches && on.app_hash_launches <= on.hash_launches);
	if (on.flushed > 1)
		print_message("merge_test: %llu post-hashes went alone (the machine was busy)\n",
			      (unsigned long long)on.flushed - 1);
	assert_int_equal(off.hash_launches, 32);
	assert_int_equal(off.merged + off.flushed, 0);
	/* carried pre-digests need no pre-hash: each post-hash goes alone */
	assert_int_equal(carried.hash_launches, 17);
	assert_int_equal(carried.merged, 0);
}

/* Every lone post-hash of r was sent alone by one cause; `want` gives how
 * many each cause sent on an idle machine.  A busy one may keep the program
 * from its next call past the hold's bound: the background thread then sent
 * that post-hash, counted as hash_flush_bound instead. */
static void assert_flush_causes(const struct run *r, const uint64_t want[64])
{
	uint64_t sum = r->ctr[KTRACE_CTR_HASH_FLUSH_BOUND], missing = 0;

	for (uint32_t id = KTRACE_CTR_HASH_FLUSH_STREAM; id <= KTRACE_CTR_HASH_FLUSH_OTHER; id++) {
		if (id == KTRACE_CTR_HASH_FLUSH_BOUND)
			continue;
		assert_true(r->ctr[id] <= want[id]);
		missing += want[id] - r->ctr[id];
		sum += r->ctr[id];
	}
	assert_int_equal(sum, r->flushed);
	assert_int_equal(missing, r->ctr[KTRACE_CTR_HASH_FLUSH_BOUND]);
}

/* Run mode until no post-hash went alone by the hold's bound (up to three
 * tries: a busy machine may keep the program from its next call past it). */
static void record_run_unhurried(const char *mode, struct run *r)
{
	for (int tries = 0; tries < 3 && (tries == 0 || r->ctr[KTRACE_CTR_HASH_FLUSH_BOUND]); tries++)
		record_run(mode, NULL, r);
}

/* Each call after a launch launches its held post-hash first. */
static void test_flush_before_ordering_calls(void **state)
{
	static struct run on, off;
	uint64_t want[64] = {
		/* the memset and the copy; the event record, the host function,
		 * the synchronisations and the query; L3 on s2 before L4 on s;
		 * the launch not traced */
		[KTRACE_CTR_HASH_FLUSH_COPY] = 2, [KTRACE_CTR_HASH_FLUSH_ORDER] = 5,
		[KTRACE_CTR_HASH_FLUSH_STREAM] = 1, [KTRACE_CTR_HASH_FLUSH_UNHASHED] = 1,
	};

	(void)state;
	record_run_unhurried("flush", &on);
	record_run("flush", "KTRACE_HASH_MERGE=0", &off);
	assert_int_equal(on.n, 9);
	assert_digests(&on, 0, 1.0f, 2.0f);   /* memset after */
	assert_digests(&on, 1, 0.0f, 1.0f);   /* copy after */
	assert_digests(&on, 2, 3.0f, 4.0f);   /* event record, then a launch on s2 */
	assert_digests(&on, 3, 4.0f, 5.0f);
	assert_digests(&on, 4, 5.0f, 6.0f);   /* host function after */
	assert_digests(&on, 5, 9.0f, 10.0f);  /* stream synchronised, host write */
	assert_digests(&on, 6, 20.0f, 21.0f); /* stream queried, host write */
	assert_digests(&on, 7, 30.0f, 31.0f); /* a launch not traced after */
	assert_digests(&on, 8, 32.0f, 33.0f);
	assert_same_digests(&on, &off);
	assert_int_equal(on.merged, 0); /* something came between every two launches */
	assert_int_equal(on.flushed, 9);
	assert_flush_causes(&on, want);
	assert_int_equal(on.hash_launches, off.hash_launches);
}

/* The program makes no driver call after a launch: the background thread
 * launches the held post-hash within its bound. */
static void test_poller_flush(void **state)
{
	static struct run on;

	(void)state;
	record_run("poller", NULL, &on);
	assert_int_equal(on.poller_flush, 1);
	assert_int_equal(on.n, 1);
	assert_digests(&on, 0, 1.0f, 2.0f);
	assert_int_equal(on.flushed, 1);
	assert_int_equal(on.ctr[KTRACE_CTR_HASH_FLUSH_BOUND], 1);
}

/* fork() launches the held post-hash first; the child goes, the parent
 * goes on hashing. */
static void test_fork(void **state)
{
	static struct run on;

	(void)state;
	record_run("fork", NULL, &on);
	assert_int_equal(on.n, 2);
	assert_digests(&on, 0, 1.0f, 2.0f);
	assert_digests(&on, 1, 60.0f, 61.0f);
	assert_int_equal(on.ctr[KTRACE_CTR_HASH_FLUSH_OTHER], 1); /* the fork */
}

/* A free of memory the held post-hash does not read leaves it held; a free
 * of memory it reads launches it first. */
static void test_frees(void **state)
{
	static struct run on, off;
	/* D's free; the context synchronised */
	uint64_t want[64] = { [KTRACE_CTR_HASH_FLUSH_MEMORY] = 1, [KTRACE_CTR_HASH_FLUSH_ORDER] = 1 };

	(void)state;
	record_run_unhurried("free", &on);
	record_run("free", "KTRACE_HASH_MERGE=0", &off);
	assert_int_equal(on.n, 4);
	assert_digests(&on, 0, 1.0f, 2.0f);
	assert_digests(&on, 1, 2.0f, 3.0f);
	assert_digests(&on, 2, 1.0f, 2.0f); /* D, hashed before its free */
	assert_digests(&on, 3, 3.0f, 4.0f);
	assert_same_digests(&on, &off);
	/* L0 into L1's pre-hash (B's free kept it held), L1 into L2's; L2
	 * launched alone by D's free, L3 at the end */
	assert_int_equal(on.merged + on.flushed, 4);
	assert_int_equal(on.flushed, 2);
	assert_int_equal(on.merged, 2);
	assert_flush_causes(&on, want);
}

/* An asynchronous memset or copy launches the held post-hash first only
 * when it writes bytes the post-hash reads. */
static void test_async_writes(void **state)
{
	static struct run on, off;
	/* the memset of A, the copy into A; the context synchronised */
	uint64_t want[64] = { [KTRACE_CTR_HASH_FLUSH_COPY] = 2, [KTRACE_CTR_HASH_FLUSH_ORDER] = 1 };

	(void)state;
	record_run_unhurried("writes", &on);
	record_run("writes", "KTRACE_HASH_MERGE=0", &off);
	assert_int_equal(on.n, 4);
	assert_digests(&on, 0, 1.0f, 2.0f);
	assert_digests(&on, 1, 2.0f, 3.0f);
	assert_digests(&on, 2, 0.0f, 1.0f);
	assert_digests(&on, 3, 2.0f, 3.0f);
	assert_same_digests(&on, &off);
	/* L0 into L1's pre-hash (the writes of B kept it held) */
	assert_int_equal(on.merged, 1);
	assert_int_equal(on.flushed, 3);
	assert_flush_causes(&on, want);
}

static int setup(void **state)
{
	(void)state;
	return kt_trace_dirs(build_dir, tmp_dir, sizeof tmp_dir, "merge");
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
		cmocka_unit_test(test_flush_before_ordering_calls),
		cmocka_unit_test(test_poller_flush),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_frees),
		cmocka_unit_test(test_async_writes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
