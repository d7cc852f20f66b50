/* test/unit/diff_cli_test.c: ktrace-diff and the `ktrace` front end as programs (cmocka).
 *
 * Runs build/ktrace-diff and build/ktrace ($BUILD) on synthetic traces and
 * checks exit codes, one-line errors and report files.  `ktrace check` is
 * driven with a fake traced program (diff_fakeprog, which writes synthetic
 * traces) under a fake preloaded library (diff_fakelib.so via KTRACE_LIB);
 * the real libktrace.so is then loaded into plain CPU programs when it is
 * built (it must load and do nothing harmful without a GPU driver).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test/run_capture.h"
#include "test/unit/diff_sim.h"
#include "tools/model/trace_model.h"

static char tmpdir[256];
static char build[256];

/* argv run here, its stdout and stderr captured (through files in tmpdir). */
static struct kt_run run(char *const *argv)
{
	return kt_run_captured(tmpdir, NULL, argv);
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void path_of(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static void tool(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", build, name);
}

static void write_pair(int nondet)
{
	struct sim_opts oa, ob;
	char pa[512], pb[512], err[512];
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	if (nondet)
		ob.nondet_iter = 1;
	path_of(pa, sizeof pa, "a.ktrace");
	path_of(pb, sizeof pb, "b.ktrace");
	if (sim_write(pa, &oa, err, sizeof err) || sim_write(pb, &ob, err, sizeof err))
		fail_msg("sim_write: %s", err);
}

/* An error: exit 2, exactly one line on stderr, mentioning `must`. */
static void expect_error(struct kt_run *r, const char *must)
{
	if (r->status != 2 || count_lines(r->err) != 1 || (must && !strstr(r->err, must)))
		fail_msg("expected one error line with '%s' and exit 2, got %d: %s", must ? must : "", r->status, r->err);
}

/* ---- ktrace-diff ------------------------------------------------------------------ */

static void test_diff_identical_and_diverged(void **state)
{
	(void)state;
	char t[512], a[512], b[512];
	tool(t, sizeof t, "ktrace-diff");
	path_of(a, sizeof a, "a.ktrace");
	path_of(b, sizeof b, "b.ktrace");
	write_pair(0);
	struct kt_run r = run((char *[]){ t, a, b, NULL });
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "result: identical (15 launches compared)"));
	assert_string_equal(r.err, "");
	kt_run_free(&r);

	write_pair(1);
	r = run((char *[]){ t, a, b, NULL });
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "first divergence: reduce_sum(float const*, float*, int)"));
	assert_non_null(strstr(r.out, "the kernel itself is non-deterministic"));
	kt_run_free(&r);

	r = run((char *[]){ t, "--json", a, b, NULL });
	assert_int_equal(r.status, 1);
	assert_true(r.out[0] == '{');
	assert_non_null(strstr(r.out, "\"classification\": \"kernel_nondeterministic\""));
	kt_run_free(&r);

	/* `ktrace diff` is the same tool */
	char k[512];
	tool(k, sizeof k, "ktrace");
	r = run((char *[]){ k, "diff", "--all", a, b, NULL });
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "divergence 7: multi_tensor_apply_kernel"));
	kt_run_free(&r);
}

/* A trace against itself (or a byte copy of it) is loaded once and shared:
 * the report is the one of two loads (B read from standard input, which is
 * never shared), but for B's name. */
static void test_diff_same_file_shared(void **state)
{
	(void)state;
	char t[512], a[512], c[512], cmd[2200];
	tool(t, sizeof t, "ktrace-diff");
	path_of(a, sizeof a, "a.ktrace");
	path_of(c, sizeof c, "copy.ktrace");
	write_pair(1);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", a, c);
	assert_int_equal(system(cmd), 0);
	const char *modes[] = { "--all", "--strict" };
	for (int m = 0; m < 2; m++) {
		snprintf(cmd, sizeof cmd, "exec '%s' %s '%s' - < '%s'", t, modes[m], a, a);
		struct kt_run slow = run((char *[]){ "/bin/sh", "-c", cmd, NULL });
		char *b_line = strstr(slow.out, "\nB: - (");
		if (!b_line)
			fail_msg("%s: exit %d\n%s%s", cmd, slow.status, slow.out, slow.err);
		for (int k = 0; k < 2; k++) {
			const char *b = k ? c : a;
			struct kt_run fast = run((char *[]){ t, (char *)modes[m], a, (char *)b, NULL });
			char expect[8192];
			snprintf(expect, sizeof expect, "%.*s\nB: %s (%s", (int)(b_line - slow.out), slow.out, b,
				 b_line + strlen("\nB: - ("));
			assert_int_equal(fast.status, slow.status);
			assert_string_equal(fast.out, expect);
			assert_string_equal(fast.err, slow.err);
			kt_run_free(&fast);
		}
		kt_run_free(&slow);
	}
	unlink(c);
}

static void test_diff_report_files(void **state)
{
	(void)state;
	char t[512], a[512], b[512], ju[512], md[512];
	tool(t, sizeof t, "ktrace-diff");
	path_of(a, sizeof a, "a.ktrace");
	path_of(b, sizeof b, "b.ktrace");
	path_of(ju, sizeof ju, "report.xml");
	path_of(md, sizeof md, "summary.md");
	write_pair(1);
	unlink(md);
	for (int i = 0; i < 2; i++) {
		struct kt_run r = run((char *[]){ t, "--quiet", "--github", "--junit", ju, "--markdown", md, a, b, NULL });
		assert_int_equal(r.status, 1);
		assert_true(!strncmp(r.out, "::error title=ktrace%3A non-deterministic kernel in reduce_sum", 61));
		kt_run_free(&r);
	}
	char *x = kt_slurp(ju);
	/* 5 kernels and the program's results (no device-to-host copy: skipped) */
	assert_non_null(strstr(x, "<testsuites name=\"ktrace determinism\" tests=\"6\" failures=\"4\" errors=\"0\" "
				  "skipped=\"1\""));
	assert_non_null(strstr(x, "<failure type=\"kernel_nondeterministic\""));
	free(x);
	char *m = kt_slurp(md);
	/* appended, as $GITHUB_STEP_SUMMARY wants */
	char *first = strstr(m, "### ktrace determinism check: DIVERGED");
	assert_non_null(first);
	assert_non_null(strstr(first + 1, "### ktrace determinism check: DIVERGED"));
	free(m);
	/* an unwritable report file: one line, exit 2 */
	struct kt_run r = run((char *[]){ t, "--quiet", "--junit", "/nonexistent-dir/r.xml", a, b, NULL });
	expect_error(&r, "/nonexistent-dir/r.xml");
	kt_run_free(&r);
}

static void test_diff_errors(void **state)
{
	(void)state;
	char t[512], a[512], tr[512], junk[512], empty[512];
	tool(t, sizeof t, "ktrace-diff");
	path_of(a, sizeof a, "a.ktrace");
	path_of(tr, sizeof tr, "truncated.ktrace");
	path_of(junk, sizeof junk, "junk.ktrace");
	path_of(empty, sizeof empty, "empty.ktrace");
	write_pair(0);
	/* truncated: a copy of a.ktrace cut in the middle */
	char *full = NULL;
	size_t len;
	{
		FILE *f = fopen(a, "rb");
		assert_non_null(f);
		fseek(f, 0, SEEK_END);
		len = (size_t)ftell(f);
		fseek(f, 0, SEEK_SET);
		full = malloc(len);
		assert_int_equal(fread(full, 1, len, f), len);
		fclose(f);
		f = fopen(tr, "wb");
		fwrite(full, 1, len / 2, f);
		fclose(f);
		f = fopen(junk, "wb");
		fputs("#!/bin/sh\necho not a trace\n", f);
		fclose(f);
		f = fopen(empty, "wb");
		fclose(f);
		free(full);
	}
	struct kt_run r = run((char *[]){ t, a, tr, NULL });
	expect_error(&r, tr);
	assert_string_equal(r.out, "");
	kt_run_free(&r);
	r = run((char *[]){ t, junk, a, NULL });
	expect_error(&r, junk);
	kt_run_free(&r);
	r = run((char *[]){ t, a, empty, NULL });
	expect_error(&r, empty);
	kt_run_free(&r);
	r = run((char *[]){ t, a, "/nonexistent/x.ktrace", NULL });
	expect_error(&r, "/nonexistent/x.ktrace");
	kt_run_free(&r);
	r = run((char *[]){ t, a, NULL });
	expect_error(&r, "two traces");
	kt_run_free(&r);
	r = run((char *[]){ t, "--bogus", a, a, NULL });
	expect_error(&r, "--bogus");
	kt_run_free(&r);
	r = run((char *[]){ t, "--junit", NULL });
	expect_error(&r, "--junit");
	kt_run_free(&r);
	/* --partial accepts the crashed run and still compares (2 when what
	 * was written holds no launch that could be compared) */
	r = run((char *[]){ t, "--partial", a, tr, NULL });
	assert_true(r.status == 0 || r.status == 1 || (r.status == 2 && strstr(r.err, "nothing compared")));
	assert_non_null(strstr(r.out, "warning: run B:"));
	kt_run_free(&r);
	r = run((char *[]){ t, "--help", NULL });
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: ktrace-diff"));
	kt_run_free(&r);
}

/* ---- ktrace run / check with the fake library ---------------------------------------- */

static void fake_env(const char *mode)
{
	char lib[512], counter[512], driver[512];
	tool(lib, sizeof lib, "diff_fakelib.so");
	tool(driver, sizeof driver, "fakecuda"); /* a CUDA driver is installed (ktrace check looks) */
	path_of(counter, sizeof counter, "counter");
	unlink(counter);
	setenv("KTRACE_LIB", lib, 1);
	setenv("LD_LIBRARY_PATH", driver, 1);
	setenv("DIFF_FAKE_MODE", mode, 1);
	setenv("DIFF_FAKE_COUNTER", counter, 1);
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
	unsetenv("LD_PRELOAD");
}

/* What `ktrace run` gives the command for PyTorch's and JAX's allocators,
 * printed by the command itself: "<PYTORCH_CUDA_ALLOC_CONF>|<XLA_...>|<KTRACE_ALLOCATOR_SET>". */
static struct kt_run run_allocator_env(const char *k, const char *opt)
{
	static char script[] = "printf '%s|%s|%s' \"$PYTORCH_CUDA_ALLOC_CONF\" \"$XLA_PYTHON_CLIENT_ALLOCATOR\" "
			       "\"$KTRACE_ALLOCATOR_SET\"";

	if (opt)
		return run((char *[]){ (char *)k, "run", (char *)opt, "--", "/bin/sh", "-c", script, NULL });
	return run((char *[]){ (char *)k, "run", "--", "/bin/sh", "-c", script, NULL });
}

/* What `ktrace run` says of a command that used no CUDA (the shell here). */
#define NO_TRACE_LINE                                                                                      \
	"ktrace run: no trace was written: '/bin/sh' did not use the CUDA driver (or libktrace.so was not " \
	"loaded: static and setuid programs ignore LD_PRELOAD)\n"

/* One allocation per tensor by default; the user's choices kept; a note
 * when their expandable_segments stays; --keep-allocator changes nothing;
 * KTRACE_ALLOCATOR_SET says which variables ktrace set. */
static void test_run_allocator_env(void **state)
{
	char k[512];
	struct kt_run r;

	(void)state;
	tool(k, sizeof k, "ktrace");
	fake_env("exit3");
	unsetenv("PYTORCH_CUDA_ALLOC_CONF");
	unsetenv("PYTORCH_ALLOC_CONF");
	unsetenv("XLA_PYTHON_CLIENT_ALLOCATOR");
	r = run_allocator_env(k, NULL);
	assert_string_equal(r.out,
			    "backend:cudaMallocAsync|platform|PYTORCH_CUDA_ALLOC_CONF,XLA_PYTHON_CLIENT_ALLOCATOR");
	assert_string_equal(r.err, NO_TRACE_LINE);
	kt_run_free(&r);
	r = run_allocator_env(k, "--keep-allocator");
	assert_string_equal(r.out, "||keep");
	kt_run_free(&r);
	setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128", 1);
	setenv("XLA_PYTHON_CLIENT_ALLOCATOR", "bfc", 1);
	r = run_allocator_env(k, NULL);
	assert_string_equal(r.out, "backend:cudaMallocAsync,max_split_size_mb:128|bfc|PYTORCH_CUDA_ALLOC_CONF");
	kt_run_free(&r);
	setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", 1);
	r = run_allocator_env(k, NULL);
	assert_string_equal(r.out, "expandable_segments:True|bfc|none");
	assert_non_null(strstr(r.err, "ktrace: PYTORCH_CUDA_ALLOC_CONF sets expandable_segments"));
	assert_int_equal(count_lines(r.err), 2); /* the note, and NO_TRACE_LINE */
	kt_run_free(&r);
	r = run_allocator_env(k, "--quiet");
	assert_string_equal(r.err, NO_TRACE_LINE); /* a warning, printed with --quiet too */
	kt_run_free(&r);
	unsetenv("PYTORCH_CUDA_ALLOC_CONF");
	unsetenv("XLA_PYTHON_CLIENT_ALLOCATOR");
}

static void test_check_fake(void **state)
{
	(void)state;
	char k[512], prog[512], dir[512], ju[512];
	tool(k, sizeof k, "ktrace");
	tool(prog, sizeof prog, "diff_fakeprog");

	fake_env("same");
	struct kt_run r = run((char *[]){ k, "check", "--quiet", "--", prog, NULL });
	if (r.status != 0)
		fail_msg("check of identical runs: %d\n%s%s", r.status, r.out, r.err);
	assert_non_null(strstr(r.out, "A: run 1 (pid 1001"));
	assert_non_null(strstr(r.out, "B: run 2 (pid 2002"));
	assert_non_null(strstr(r.out, "result: identical"));
	kt_run_free(&r);

	/* the fake program cannot replay: its digest difference stays unconfirmed, exit 0 */
	fake_env("nondet");
	r = run((char *[]){ k, "check", "--quiet", "--", prog, NULL });
	if (r.status != 0 || !strstr(r.out, "result: digests differ, unconfirmed (not reproduced by replay)") ||
	    !strstr(r.out, "1. first divergence: reduce_sum(float const*, float*, int), launch 13 in A (occurrence 1 "
			   "of _Z10reduce_sumPKfPfi): not replayable (the replay run never reached launch 1") ||
	    !strstr(r.err, "ktrace check: note: digests differ, but no replay confirmed"))
		fail_msg("check of a program that cannot replay: %d\n%s%s", r.status, r.out, r.err);
	kt_run_free(&r);

	/* --max-replays 0: the digests' verdict stands (exit 1), labelled unconfirmed */
	fake_env("nondet");
	path_of(ju, sizeof ju, "check.xml");
	path_of(dir, sizeof dir, "checkdir");
	r = run((char *[]){ k, "check", "--runs", "3", "--max-replays", "0", "--dir", dir, "--junit", ju, prog, NULL });
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "result: DIVERGED, unconfirmed (digests only)"));
	/* run 1 vs run 2 diverges (even runs go wrong), run 1 vs run 3 does not */
	assert_non_null(strstr(r.out, "first divergence: reduce_sum(float const*, float*, int)"));
	assert_non_null(strstr(r.out, "B: run 3"));
	assert_non_null(strstr(r.err, "ktrace check: run 3 of 3: "));
	assert_non_null(strstr(r.err, "traces kept in"));
	kt_run_free(&r);
	char *x = kt_slurp(ju);
	assert_non_null(strstr(x, "<testsuite name=\"run 1 vs run 2\""));
	assert_non_null(strstr(x, "<testsuite name=\"run 1 vs run 3\" tests=\"6\" failures=\"0\""));
	free(x);
	/* the traces are kept in --dir; a second check there refuses to mix them */
	r = run((char *[]){ k, "check", "--dir", dir, "--", prog, NULL });
	expect_error(&r, "already holds traces");
	kt_run_free(&r);

	fake_env("hostdata");
	r = run((char *[]){ k, "check", "--quiet", "--json", "--max-replays=0", "--", prog, NULL });
	assert_int_equal(r.status, 1);
	/* one object, whatever the number of runs: the runs, the exit status, the comparisons */
	assert_true(!strncmp(r.out, "{\n  \"runs\": 2,\n  \"exit_code\": 1,\n  \"comparisons\": [\n    {", 54));
	assert_non_null(strstr(r.out, "\"classification\": \"inputs_differ\""));
	assert_non_null(strstr(r.out, "\"dir\": \"htod\""));
	kt_run_free(&r);
}

static void test_check_failures(void **state)
{
	(void)state;
	char k[512], prog[512];
	tool(k, sizeof k, "ktrace");
	tool(prog, sizeof prog, "diff_fakeprog");
	fake_env("exit3");
	struct kt_run r = run((char *[]){ k, "check", "--quiet", "--", prog, NULL });
	expect_error(&r, "run 1 of 2 failed (exit status 3)");
	kt_run_free(&r);
	fake_env("notrace");
	r = run((char *[]){ k, "check", "--quiet", "--", prog, NULL });
	expect_error(&r, "run 1 left no trace");
	kt_run_free(&r);
	fake_env("same");
	r = run((char *[]){ k, "check", "--quiet", "--", "/nonexistent/program", NULL });
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "cannot run '/nonexistent/program'"));
	assert_non_null(strstr(r.err, "ktrace check: warm-up run (untraced"));
	kt_run_free(&r);
	r = run((char *[]){ k, "check", "--quiet", "--no-warmup", "--", "/nonexistent/program", NULL });
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "run 1 of 2 failed"));
	kt_run_free(&r);
	r = run((char *[]){ k, "check", "--runs", "1", "--", prog, NULL });
	expect_error(&r, "--runs '1'");
	kt_run_free(&r);
	r = run((char *[]){ k, "check", "--no-hash", "--", prog, NULL });
	expect_error(&r, "--no-hash");
	kt_run_free(&r);
	r = run((char *[]){ k, "check", NULL });
	expect_error(&r, "no command given");
	kt_run_free(&r);
	setenv("KTRACE_LIB", "/nonexistent/libktrace.so", 1);
	r = run((char *[]){ k, "check", "--", prog, NULL });
	expect_error(&r, "KTRACE_LIB=/nonexistent/libktrace.so");
	kt_run_free(&r);
}

/* With a warm-up, JAX gets a persistent compilation cache in the check
 * directory for every run (the warm-up fills it, the traced runs load);
 * without one, or when the environment names a cache, nothing is set. */
static void test_check_jax_cache(void **state)
{
	char k[512], prog[512], dir[600];
	struct kt_run r;

	(void)state;
	tool(k, sizeof k, "ktrace");
	tool(prog, sizeof prog, "diff_fakeprog");
	snprintf(dir, sizeof dir, "%s/jaxcheck", tmpdir);
	unsetenv("JAX_COMPILATION_CACHE_DIR");
	unsetenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS");
	fake_env("jaxcache");
	r = run((char *[]){ k, "check", "--quiet", "--dir", dir, "--", prog, NULL });
	if (r.status != 0 || !strstr(r.err, "/jaxcheck/jax-cache min_time=0") || strstr(r.err, "JAXCACHE=(unset)"))
		fail_msg("with a warm-up: %d\n%s%s", r.status, r.out, r.err);
	kt_run_free(&r);
	fake_env("jaxcache");
	r = run((char *[]){ k, "check", "--quiet", "--no-warmup", "--", prog, NULL });
	if (r.status != 0 || strstr(r.err, "/jax-cache"))
		fail_msg("without a warm-up: %d\n%s%s", r.status, r.out, r.err);
	kt_run_free(&r);
	fake_env("jaxcache");
	setenv("JAX_COMPILATION_CACHE_DIR", "/mine", 1);
	r = run((char *[]){ k, "check", "--quiet", "--", prog, NULL });
	if (r.status != 0 || !strstr(r.err, "JAXCACHE=/mine min_time=(unset)"))
		fail_msg("the program's own cache: %d\n%s%s", r.status, r.out, r.err);
	kt_run_free(&r);
	unsetenv("JAX_COMPILATION_CACHE_DIR");
}

/* A program that fails with one allocation per tensor (PyTorch's CUDA graph
 * trees under cudaMallocAsync) is checked with its own allocator, said once;
 * the failed traced run leaves no trace behind to be mistaken for a rank. */
static void test_check_allocator_fallback(void **state)
{
	static const char *note = "note: the program failed with the allocator settings ktrace chose";
	char k[512], prog[512];
	struct kt_run r;

	(void)state;
	tool(k, sizeof k, "ktrace");
	tool(prog, sizeof prog, "diff_fakeprog");
	unsetenv("PYTORCH_CUDA_ALLOC_CONF");
	unsetenv("PYTORCH_ALLOC_CONF");
	fake_env("asyncfails");
	r = run((char *[]){ k, "check", "--quiet", "--", prog, NULL });
	if (r.status != 0 || !strstr(r.err, "warm-up run (untraced, so that the traced runs find warm caches) "
					    "failed (exit status 4)") || !strstr(r.err, note) ||
	    !strstr(r.out, "result: identical"))
		fail_msg("fallback after the warm-up: %d\n%s%s", r.status, r.out, r.err);
	kt_run_free(&r);
	fake_env("asyncfails");
	r = run((char *[]){ k, "check", "--quiet", "--no-warmup", "--", prog, NULL });
	if (r.status != 0 || !strstr(r.err, "run 1 of 2 failed (exit status 4)") || !strstr(r.err, note) ||
	    !strstr(r.out, "result: identical"))
		fail_msg("fallback after run 1: %d\n%s%s", r.status, r.out, r.err);
	kt_run_free(&r);
	fake_env("asyncfails");
	r = run((char *[]){ k, "check", "--quiet", "--keep-allocator", "--", prog, NULL });
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.err, note));
	kt_run_free(&r);
	fake_env("exit3"); /* failing whatever the allocator: no second try */
	r = run((char *[]){ k, "check", "--quiet", "--keep-allocator", "--", prog, NULL });
	assert_int_equal(r.status, 2);
	assert_null(strstr(r.err, note));
	kt_run_free(&r);
}

static void test_run_fake(void **state)
{
	(void)state;
	char k[512], prog[512], out[512];
	tool(k, sizeof k, "ktrace");
	tool(prog, sizeof prog, "diff_fakeprog");
	path_of(out, sizeof out, "run-%p.ktrace");
	fake_env("exit3");
	struct kt_run r = run((char *[]){ k, "run", "-o", out, "--kernels", "reduce|scale", "--launches", "0:100",
				       "--hash-max", "64M", "--quiet", "--", prog, NULL });
	assert_int_equal(r.status, 3); /* the command's own status */
	kt_run_free(&r);
	r = run((char *[]){ k, "run", "--", "/bin/sh", "-c", "test \"$KTRACE_HASH\" = 0 && exit 7", NULL });
	assert_int_equal(r.status, 1);
	kt_run_free(&r);
	r = run((char *[]){ k, "run", "--no-hash", "--", "/bin/sh", "-c",
			    "test \"$KTRACE_HASH\" = 0 && test -n \"$DIFF_FAKELIB_LOADED\" && exit 7", NULL });
	assert_int_equal(r.status, 7);
	kt_run_free(&r);
	r = run((char *[]){ k, "run", "--launches", "9:3", "--", prog, NULL });
	expect_error(&r, "--launches '9:3'");
	kt_run_free(&r);
	r = run((char *[]){ k, "run", "--kernels", "(", "--", prog, NULL });
	expect_error(&r, "--kernels '('");
	kt_run_free(&r);
	r = run((char *[]){ k, "run", "--hash-max", "12Q", "--", prog, NULL });
	expect_error(&r, "--hash-max '12Q'");
	kt_run_free(&r);
	r = run((char *[]){ k, "run", NULL });
	expect_error(&r, "no command given");
	kt_run_free(&r);
	r = run((char *[]){ k, "frobnicate", NULL });
	expect_error(&r, "unknown command 'frobnicate'");
	kt_run_free(&r);
	const char *subs[] = { "run", "check", "diff", "--help" };
	for (size_t i = 0; i < 4; i++) {
		r = run((char *[]){ k, (char *)subs[i], i < 3 ? "--help" : NULL, NULL });
		assert_int_equal(r.status, 0);
		assert_non_null(strstr(r.out, "usage: ktrace"));
		kt_run_free(&r);
	}
}

/* Every tool reads its options with getopt_long under the same rules:
 * one line and exit 2 for a mistake, and "--" is never an option's value. */
static void expect_exact_error(char *const *argv, const char *line)
{
	struct kt_run r = run(argv);
	if (r.status != 2 || strcmp(r.err, line))
		fail_msg("%s %s: exit %d, stderr \"%s\", expected \"%s\"", argv[0], argv[1], r.status, r.err, line);
	kt_run_free(&r);
}

static void test_option_errors(void **state)
{
	(void)state;
	char k[512], d[512], prog[512], a[512];
	tool(k, sizeof k, "ktrace");
	tool(d, sizeof d, "ktrace-diff");
	tool(prog, sizeof prog, "diff_fakeprog");
	path_of(a, sizeof a, "a.ktrace");
	write_pair(0);
	fake_env("same");
	expect_exact_error((char *[]){ k, "run", "--hash-max", "20000000T", "--", "true", NULL },
			   "ktrace run: --hash-max '20000000T': too large (more than 2^64-1 bytes)\n");
	expect_exact_error((char *[]){ k, "run", "--hash-max", "0", "--", "true", NULL },
			   "ktrace run: --hash-max '0': must be at least 1 byte\n");
	expect_exact_error((char *[]){ k, "run", "--kernels", "--", prog, NULL },
			   "ktrace run: option '--kernels' needs an argument (try --help)\n");
	expect_exact_error((char *[]){ k, "run", "-o", "--", prog, NULL },
			   "ktrace run: option '-o' needs an argument (try --help)\n");
	expect_exact_error((char *[]){ k, "run", "--bogus", "--", prog, NULL },
			   "ktrace run: unknown option '--bogus' (try --help)\n");
	expect_exact_error((char *[]){ k, "run", "-x", "--", prog, NULL },
			   "ktrace run: unknown option '-x' (try --help)\n");
	expect_exact_error((char *[]){ k, "run", "--quiet=1", "--", prog, NULL },
			   "ktrace run: option '--quiet' takes no value (try --help)\n");
	expect_exact_error((char *[]){ k, "run", "--no", "--", prog, NULL },
			   "ktrace run: option '--no' is ambiguous (--no-hash, --no-modules, --no-nvtx, --no-torch-ops) (try --help)\n");
	expect_exact_error((char *[]){ k, "run", "-o", "t-%q.ktrace", "--", prog, NULL },
			   "ktrace run: -o/--output: KTRACE_OUTPUT 't-%q.ktrace': unknown escape '%q' (use %p %h %r %t %%)\n");
	expect_exact_error((char *[]){ k, "check", "--dir", "--", prog, NULL },
			   "ktrace check: option '--dir' needs an argument (try --help)\n");
	expect_exact_error((char *[]){ k, "check", "-o", "x.ktrace", "--", prog, NULL },
			   "ktrace check: -o/--output is a `ktrace run` option: check writes its own hashed traces "
			   "(see --dir)\n");
	expect_exact_error((char *[]){ k, "check", "--launches", "5:5", "--", prog, NULL },
			   "ktrace check: --launches '5:5': A must be less than B (A:B is A <= n < B)\n");
	expect_exact_error((char *[]){ k, "--bogus", NULL }, "ktrace: unknown option '--bogus' (try --help)\n");
	expect_exact_error((char *[]){ d, "--junit", "--", a, a, NULL },
			   "ktrace-diff: option '--junit' needs an argument (try --help)\n");
	expect_exact_error((char *[]){ d, "--markdown=", a, a, NULL }, "ktrace-diff: --markdown needs a file name\n");

	/* options after the operands (ktrace-diff), values with '=', abbreviations */
	struct kt_run r = run((char *[]){ d, a, a, "--json", NULL });
	assert_int_equal(r.status, 0);
	assert_true(r.out[0] == '{');
	kt_run_free(&r);
	r = run((char *[]){ k, "run", "--hash=64K", "--launch", "0:10", "--", "/bin/sh", "-c",
			    "test \"$KTRACE_HASH_MAX\" = 64K && test \"$KTRACE_LAUNCHES\" = 0:10 && exit 7", NULL });
	assert_int_equal(r.status, 7);
	kt_run_free(&r);
	/* the command's own options are its own: parsing stops at the command */
	r = run((char *[]){ k, "run", "/bin/sh", "-c", "exit 5", "--bogus", NULL });
	assert_int_equal(r.status, 5);
	kt_run_free(&r);
}

/* ---- the real library on a CPU-only program ---------------------------------------------- */

static void test_real_library(void **state)
{
	(void)state;
	char k[512], lib[512], out[512];
	tool(k, sizeof k, "ktrace");
	tool(lib, sizeof lib, "libktrace.so");
	fake_env("same");
	if (access(lib, R_OK) != 0) {
		print_message("skipped: %s is not built\n", lib);
		skip();
	}
	unsetenv("KTRACE_LIB"); /* found next to build/ktrace */
	unsetenv("LD_PRELOAD");
	/* LD_LIBRARY_PATH stays fake_env's: a CUDA driver (the test driver) is installed */
	path_of(out, sizeof out, "real.ktrace");
	unlink(out);
#if defined(__SANITIZE_ADDRESS__)
	/* a sanitized libktrace.so cannot be preloaded into plain programs: only
	 * the (sanitized) fake-driver application below */
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0:handle_segv=0:handle_abort=0:"
			       "allow_user_segv_handler=1", 1);
	struct kt_run r;
	(void)out;
#else
	/* a program that never touches CUDA: runs as usual, no trace, and ktrace run says so */
	struct kt_run r = run((char *[]){ k, "run", "-o", out, "--", "/bin/sh", "-c", "echo hello; exit 3", NULL });
	assert_int_equal(r.status, 3);
	assert_string_equal(r.out, "hello\n");
	if (strcmp(r.err, NO_TRACE_LINE))
		fail_msg("%s printed: %s", lib, r.err);
	assert_int_not_equal(access(out, F_OK), 0);
	kt_run_free(&r);
	r = run((char *[]){ k, "check", "--quiet", "--", "/bin/true", NULL });
	expect_error(&r, "run 1 left no trace");
	kt_run_free(&r);
#endif

	/* the fake driver of the interposer tests: real traces, launches recorded */
	char app[512], fake[512];
	tool(app, sizeof app, "interpose_app");
	tool(fake, sizeof fake, "fakecuda");
	if (access(app, X_OK) != 0) {
		print_message("skipped: %s is not built\n", app);
		skip();
	}
	setenv("LD_LIBRARY_PATH", fake, 1);
	r = run((char *[]){ k, "check", "--quiet", "--", app, "threads", "2", NULL });
	/* the fake driver cannot run the checksum kernel: nothing compared, an error, never a pass */
	if (r.status != 2 || !strstr(r.out, "result: NOTHING COMPARED: none of the 16 launches of A could be compared "
					    "(16 unverified") || !strstr(r.err, "ktrace check: nothing compared"))
		fail_msg("ktrace check of %s threads 2 (fake driver): exit %d\n%s%s", app, r.status, r.out, r.err);
	kt_run_free(&r);
	r = run((char *[]){ k, "check", "--quiet", "--no-warmup", "--", app, "segv", NULL });
	unsetenv("LD_LIBRARY_PATH");
	assert_int_equal(r.status, 2); /* the library's own lines come first */
	assert_non_null(strstr(r.err, "ktrace check: run 1 of 2 failed ("));
	kt_run_free(&r);
}

/* ---- ktrace check confirms by replay: the real library on the fake driver with real memory ---- */

static void sanitizer_preload_env(void);

/* `ktrace check ARGS -- replay_app MODE` (each run numbered by a counter file,
 * the fake driver summing in an order of that number's). */
static struct kt_run check_replay_app(char **args, size_t nargs, const char *mode, const char *counter)
{
	char k[512], app[512], *argv[32];
	size_t n = 0;

	tool(k, sizeof k, "ktrace");
	tool(app, sizeof app, "replay_app");
	unlink(counter);
	setenv("REPLAY_APP_COUNTER", counter, 1);
	argv[n++] = k;
	argv[n++] = "check";
	argv[n++] = "--quiet";
	for (size_t i = 0; i < nargs && n < 26; i++)
		argv[n++] = args[i];
	argv[n++] = "--";
	argv[n++] = app;
	argv[n++] = (char *)mode;
	argv[n] = NULL;
	return run(argv);
}

static int counter_value(const char *counter)
{
	char *c = kt_slurp(counter);
	int v = atoi(c);
	free(c);
	return v;
}

static void expect_in(const struct kt_run *r, const char *out, const char *err)
{
	if ((out && !strstr(r->out, out)) || (err && !strstr(r->err, err)))
		fail_msg("exit %d, expected \"%s\" / \"%s\" in:\n%s%s", r->status, out ? out : "", err ? err : "", r->out,
			 r->err);
}

/* The confirmation's counts agree: "N distinct results in R runs: the program's
 * launch and K replays", R = K + 1 and 2 <= N <= R (the launch's result counts). */
static void expect_counts(const char *text, unsigned replays)
{
	const char *p = strstr(text, "confirmed non-deterministic (");
	unsigned distinct = 0, runs = 0, k = 0;

	if (!p || sscanf(p, "confirmed non-deterministic (%u distinct results in %u runs: the program's launch and %u "
			    "replays)", &distinct, &runs, &k) != 3)
		fail_msg("no confirmation counts in:\n%s", text);
	assert_int_equal(k, replays);
	assert_int_equal(runs, replays + 1);
	assert_true(distinct >= 2 && distinct <= runs);
}

static void test_check_replay(void **state)
{
	char lib[512], app[512], real[512], counter[512], ju[512], md[512];
	(void)state;
	tool(lib, sizeof lib, "libktrace.so");
	tool(app, sizeof app, "replay_app");
	tool(real, sizeof real, "fakecuda-real");
	if (access(lib, R_OK) != 0 || access(app, X_OK) != 0) {
		print_message("skipped: %s or %s is not built\n", lib, app);
		skip();
	}
	fake_env("same");
	unsetenv("KTRACE_LIB"); /* the real library, found next to ktrace */
	sanitizer_preload_env();
	setenv("LD_LIBRARY_PATH", real, 1);
	path_of(counter, sizeof counter, "replay-counter");
	path_of(ju, sizeof ju, "replay.xml");
	path_of(md, sizeof md, "replay.md");
	unlink(md);

	/* a non-deterministic kernel: confirmed, exit 1, in every report */
	struct kt_run r = check_replay_app((char *[]){ "--junit", ju, "--markdown", md }, 4, "nondet", counter);
	assert_int_equal(r.status, 1);
	expect_in(&r, "result: DIVERGED, confirmed non-deterministic: ", NULL);
	expect_in(&r, "1. first divergence: fake_nondet_sum, launch ", NULL);
	expect_in(&r, "(occurrence 0 of fake_nondet_sum): confirmed non-deterministic (", NULL);
	expect_counts(r.out, 8);
	expect_in(&r, "arg0 (argument 0, type unknown, 4 bytes): 1 of 4 bytes differ (25%) in ", NULL);
	expect_in(&r, "verdict: confirmed non-deterministic: fake_nondet_sum",
		  "replay: Kernel fake_nondet_sum, occurrence 0: confirmed non-deterministic");
	assert_int_equal(counter_value(counter), 4); /* warm-up, run 1, run 2, one replay run */
	kt_run_free(&r);
	char *x = kt_slurp(ju);
	assert_non_null(strstr(x, "<failure type=\"confirmed_nondeterministic\" message=\"confirmed non-deterministic "
				  "("));
	assert_non_null(strstr(x, " distinct results in 9 runs: the program&apos;s launch and 8 replays)"));
	free(x);
	x = kt_slurp(md);
	assert_non_null(strstr(x, "### ktrace determinism check: DIVERGED, confirmed non-deterministic"));
	free(x);
	r = check_replay_app((char *[]){ "--json", "--github", "--replays", "3", "--no-warmup" }, 5, "nondet", counter);
	assert_int_equal(r.status, 1);
	expect_in(&r, "\"method\": \"replay\"", "::error title=ktrace%3A confirmed non-deterministic kernel fake_nondet_sum");
	expect_in(&r, "\"outcome\": \"confirmed\"", NULL);
	expect_in(&r, "\"summary\": \"confirmed non-deterministic (", NULL);
	expect_counts(r.out, 3);
	expect_in(&r, "\"elements_differing\": 1", NULL);
	assert_int_equal(counter_value(counter), 3); /* no warm-up */
	kt_run_free(&r);

	/* deterministic: nothing to confirm, exit 0 */
	r = check_replay_app(NULL, 0, "same", counter);
	assert_int_equal(r.status, 0);
	expect_in(&r, "result: identical (", NULL);
	assert_null(strstr(r.err, "replay: "));
	kt_run_free(&r);

	/* digests differ, but every replay in the process agrees, and nothing of it reaches
	 * the host (different results the program observed would fail the check by
	 * themselves): unconfirmed, exit 0 with a note */
	setenv("FAKECUDA_NONDET_FIXED", "1", 1);
	r = check_replay_app((char *[]){ "--junit", ju }, 2, "hidden", counter);
	unsetenv("FAKECUDA_NONDET_FIXED");
	assert_int_equal(r.status, 0);
	expect_in(&r, "result: digests differ, unconfirmed (not reproduced by replay)", "ktrace check: note: digests differ");
	expect_in(&r, "not reproduced in 8 isolated replays", NULL);
	expect_in(&r, "not proof of determinism; what else could explain the digests:", NULL);
	expect_in(&r, "- the replays ran the kernel alone from identical bytes", NULL);
	expect_in(&r, "nothing else in the traces explains it: unconfirmed", NULL);
	kt_run_free(&r);
	x = kt_slurp(ju);
	assert_non_null(strstr(x, "<skipped message=\"digests differ, not confirmed by replay: "));
	free(x);

	/* --max-replays 0: the digests' verdict, unconfirmed */
	r = check_replay_app((char *[]){ "--max-replays", "0" }, 2, "nondet", counter);
	assert_int_equal(r.status, 1);
	expect_in(&r, "result: DIVERGED, unconfirmed (digests only)", NULL);
	kt_run_free(&r);
	unsetenv("LD_LIBRARY_PATH");
	unsetenv("REPLAY_APP_COUNTER");
}

/* ---- ktrace run and the library agree on every value ------------------------------------ */

struct agree_case {
	const char *option, *variable, *value;
	int accepted;
};

static const struct agree_case agree_cases[] = {
	{ "--hash-max", "KTRACE_HASH_MAX", "1", 1 },
	{ "--hash-max", "KTRACE_HASH_MAX", "64K", 1 },
	{ "--hash-max", "KTRACE_HASH_MAX", "256m", 1 },
	{ "--hash-max", "KTRACE_HASH_MAX", "3KiB", 1 },
	{ "--hash-max", "KTRACE_HASH_MAX", "16777215T", 1 },
	{ "--hash-max", "KTRACE_HASH_MAX", "18446744073709551615", 1 },
	{ "--hash-max", "KTRACE_HASH_MAX", "20000000T", 0 },
	{ "--hash-max", "KTRACE_HASH_MAX", "16777216T", 0 },
	{ "--hash-max", "KTRACE_HASH_MAX", "99999999999999999999", 0 },
	{ "--hash-max", "KTRACE_HASH_MAX", "0", 0 },
	{ "--hash-max", "KTRACE_HASH_MAX", "12Q", 0 },
	{ "--hash-max", "KTRACE_HASH_MAX", "1.5M", 0 },
	{ "--hash-max", "KTRACE_HASH_MAX", "-1", 0 },
	{ "--launches", "KTRACE_LAUNCHES", "0:100", 1 },
	{ "--launches", "KTRACE_LAUNCHES", ":", 1 },
	{ "--launches", "KTRACE_LAUNCHES", "7", 1 },
	{ "--launches", "KTRACE_LAUNCHES", "9:3", 0 },
	{ "--launches", "KTRACE_LAUNCHES", "5:5", 0 },
	{ "--launches", "KTRACE_LAUNCHES", "1:2:3", 0 },
	{ "--launches", "KTRACE_LAUNCHES", "18446744073709551615", 0 },
	{ "--kernels", "KTRACE_KERNELS", "fake_kernel_[ab]|gemm", 1 },
	{ "--kernels", "KTRACE_KERNELS", "(", 0 },
	{ "--kernels", "KTRACE_KERNELS", "a{2,1}", 0 },
};

static void sanitizer_preload_env(void)
{
#if defined(__SANITIZE_ADDRESS__)
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0:handle_segv=0:handle_abort=0:"
			       "allow_user_segv_handler=1", 1);
#endif
}

/* `ktrace run OPTION VALUE -- app`: 1 when it ran traced, 0 when refused (one line naming the option). */
static int cli_accepts(const struct agree_case *c, char *k, const char *app, const char *out)
{
	unlink(out);
	struct kt_run r = run((char *[]){ k, "run", "--quiet", "-o", (char *)out, (char *)c->option, (char *)c->value,
				       "--", (char *)app, "exit", "0", NULL });
	int ok = r.status == 0;
	if (ok && (access(out, F_OK) != 0 || strstr(r.err, "tracing is off")))
		fail_msg("ktrace run %s '%s': ran, but untraced: %s", c->option, c->value, r.err);
	if (!ok) {
		char want[256];
		snprintf(want, sizeof want, "ktrace run: %s '%s': ", c->option, c->value);
		if (r.status != 2 || count_lines(r.err) != 1 || strncmp(r.err, want, strlen(want)))
			fail_msg("ktrace run %s '%s': exit %d, %s", c->option, c->value, r.status, r.err);
		assert_int_not_equal(access(out, F_OK), 0);
	}
	kt_run_free(&r);
	return ok;
}

/* The library preloaded with VARIABLE=VALUE: 1 when it traced, 0 when it
 * said one line naming the variable and left the program running untraced. */
static int library_accepts(const struct agree_case *c, const char *lib, const char *app, const char *out)
{
	unlink(out);
	setenv(c->variable, c->value, 1);
	setenv("KTRACE_OUTPUT", out, 1);
	setenv("KTRACE_QUIET", "1", 1);
	setenv("LD_PRELOAD", lib, 1);
	struct kt_run r = run((char *[]){ (char *)app, "exit", "0", NULL });
	unsetenv("LD_PRELOAD");
	unsetenv(c->variable);
	unsetenv("KTRACE_OUTPUT");
	unsetenv("KTRACE_QUIET");
	assert_int_equal(r.status, 0); /* the program runs either way */
	int traced = access(out, F_OK) == 0;
	if (traced && (strstr(r.err, c->variable) || strstr(r.err, "tracing is off")))
		fail_msg("%s=%s: traced, but said: %s", c->variable, c->value, r.err);
	if (!traced) {
		char want[256];
		snprintf(want, sizeof want, "%s=\"%s\": ", c->variable, c->value);
		if (count_lines(r.err) != 1 || !strstr(r.err, want) || !strstr(r.err, "tracing is off"))
			fail_msg("%s=%s: untraced, and said: %s", c->variable, c->value, r.err);
	}
	kt_run_free(&r);
	return traced;
}

static void test_run_and_library_agree(void **state)
{
	(void)state;
	char k[512], lib[512], app[512], fake[512], out[512];
	tool(k, sizeof k, "ktrace");
	tool(lib, sizeof lib, "libktrace.so");
	tool(app, sizeof app, "interpose_app");
	tool(fake, sizeof fake, "fakecuda");
	if (access(lib, R_OK) != 0 || access(app, X_OK) != 0) {
		print_message("skipped: %s or %s is not built\n", lib, app);
		skip();
	}
	fake_env("same");
	unsetenv("KTRACE_LIB"); /* the real library, found next to ktrace */
	sanitizer_preload_env();
	setenv("LD_LIBRARY_PATH", fake, 1);
	path_of(out, sizeof out, "agree.ktrace");
	for (size_t i = 0; i < sizeof agree_cases / sizeof agree_cases[0]; i++) {
		const struct agree_case *c = &agree_cases[i];
		int by_cli = cli_accepts(c, k, app, out);
		int by_lib = library_accepts(c, lib, app, out);
		if (by_cli != c->accepted || by_lib != c->accepted)
			fail_msg("%s / %s '%s': ktrace run %s it, the library %s it (expected %s)", c->option, c->variable,
				 c->value, by_cli ? "takes" : "refuses", by_lib ? "takes" : "refuses",
				 c->accepted ? "taken" : "refused");
	}
	unsetenv("LD_LIBRARY_PATH");
}

static int setup(void **state)
{
	(void)state;
	const char *t = getenv("TMPDIR");
	const char *b = getenv("BUILD");
	snprintf(tmpdir, sizeof tmpdir, "%s/ktrace-diffcli-test.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	if (!b || !*b)
		b = "build";
	if (b[0] == '/') {
		snprintf(build, sizeof build, "%s", b);
	} else {
		char cwd[200];
		if (!getcwd(cwd, sizeof cwd))
			return -1;
		snprintf(build, sizeof build, "%s/%s", cwd, b);
	}
	unsetenv("KTRACE_OUTPUT");
	unsetenv("KTRACE_HASH");
	setenv("TMPDIR", tmpdir, 1); /* ktrace check's own temporary directories */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_identical_and_diverged),
		cmocka_unit_test(test_diff_same_file_shared),
		cmocka_unit_test(test_diff_report_files),
		cmocka_unit_test(test_diff_errors),
		cmocka_unit_test(test_check_fake),
		cmocka_unit_test(test_check_failures),
		cmocka_unit_test(test_check_allocator_fallback),
		cmocka_unit_test(test_check_jax_cache),
		cmocka_unit_test(test_run_fake),
		cmocka_unit_test(test_run_allocator_env),
		cmocka_unit_test(test_option_errors),
		cmocka_unit_test(test_real_library),
		cmocka_unit_test(test_check_replay),
		cmocka_unit_test(test_run_and_library_agree),
	};
	return cmocka_run_group_tests_name("diff_cli", tests, setup, teardown);
}
