/* test/nccl/job_e2e_test.c: `ktrace check` finds the culprit rank of a
 * distributed job, end to end on the CPU (cmocka).
 *
 * `ktrace check -- build/job_launch build/job_rank_app [--planted]`: the
 * launcher (test/nccl/job_launch.c) starts two ranks with RANK, WORLD_SIZE
 * and the rest of torchrun's variables; each rank (test/nccl/job_rank_app.c)
 * runs on the fake driver with real memory (build/fakecuda-real: kernels run
 * on the CPU, ktrace's checksum kernels too, so the digests are real) and
 * the fake NCCL (build/fakenccl/libnccl.so.2: the ranks are processes and the
 * all-reduce moves their data), under the real libktrace.so, preloaded by
 * `ktrace check` itself.  Nothing is simulated on ktrace's side: the JOB,
 * COMM and COLL records come from the library's interposition of NCCL, the
 * job is recognised from them (job_launch is no launcher by its name), and
 * the culprit's replay runs in the library of the culprit's rank.
 *
 * Planted (rank 1 sums its gradient with fake_nondet_sum, in an order of its
 * own each run, before the all-reduce):
 *  - exit status 1; JSON: one job, 2 ranks each run, culprit_rank 1, the
 *    culprit rank's first divergence fake_nondet_sum, classified
 *    kernel-non-deterministic, confirmed by replay on rank 1 (confirmation
 *    rank 1, "confirmed non-deterministic"; the rank's comparison's replay of
 *    fake_nondet_sum occurrence 0 "confirmed");
 *  - rank 0 downstream: via the all_reduce (via_rank 1), its first divergence
 *    NCCL's kernel of that all_reduce;
 *  - the text report says the same, KTRACE_REPLAY names rank=1, and only one
 *    process (rank 1's) replayed.
 * Unplanted (every rank deterministic): exit status 0, "identical", no
 * divergence on any rank.
 * Skipped when the fake NCCL, the rank program, the launcher, ktrace or
 * libktrace.so is not built.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test/run_capture.h"
#include "test/scratch.h"

static char tmpdir[512], build[4096];

/* argv run in tmpdir, stdout and stderr captured. */
static struct kt_run run(char **argv)
{
	return kt_run_captured(tmpdir, tmpdir, argv);
}

static void tool(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", build, name);
}

static int has(const char *s, const char *needle)
{
	return s && strstr(s, needle) != NULL;
}

static int count(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = s; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

#define EXPECT_IN(r, text, needle)                                                                          \
	do {                                                                                                \
		if (!has(text, needle))                                                                     \
			fail_msg("missing \"%s\"; exit %d\nstdout:\n%s\nstderr:\n%s", needle, (r)->status, \
				 (r)->out, (r)->err);                                                       \
	} while (0)

/* `ktrace check [args] -- job_launch job_rank_app [--planted]`, the traces in tmpdir/<dir>. */
static struct kt_run check_job(int planted, const char *dir, char **args)
{
	char ktrace[4200], launch[4200], app[4200], libpath[8500], counter[700], tdir[700];
	char *argv[24];
	int n = 0;

	tool(ktrace, sizeof ktrace, "ktrace");
	tool(launch, sizeof launch, "job_launch");
	tool(app, sizeof app, "job_rank_app");
	snprintf(libpath, sizeof libpath, "%s/fakecuda-real:%s/fakenccl", build, build);
	snprintf(counter, sizeof counter, "%s/counter", tmpdir);
	snprintf(tdir, sizeof tdir, "%s/%s", tmpdir, dir);
	unlink(counter);
	setenv("LD_LIBRARY_PATH", libpath, 1);
	setenv("JOB_COUNTER", counter, 1); /* each run of the job sums in its own order */
	unsetenv("KTRACE_LIB");            /* the real library, found next to ktrace */
	/* sanitized programs under the sanitized library, preloaded */
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0", 1);
	argv[n++] = ktrace;
	argv[n++] = "check";
	argv[n++] = "--dir";
	argv[n++] = tdir;
	while (args && *args && n < 16)
		argv[n++] = *args++;
	argv[n++] = "--";
	argv[n++] = launch;
	argv[n++] = app;
	if (planted)
		argv[n++] = "--planted";
	argv[n] = NULL;
	struct kt_run r = run(argv);
	unlink(counter);
	return r;
}

/* The JSON's structure, when python3 is there: prints OK or what failed. */
static const char json_check[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1])); planted = sys.argv[2] == '1'\n"
	"def need(c, what):\n"
	"    if not c: print('FAILED: ' + what); sys.exit(1)\n"
	"jobs = d['jobs']; need(len(jobs) == 1, 'one job: %r' % len(jobs)); j = jobs[0]\n"
	"need(j['world_size'] == {'a': 2, 'b': 2}, 'world size 2: %r' % j['world_size'])\n"
	"need(j['nccl']['collectives_matched'] == 1, 'one collective matched: %r' % j['nccl'])\n"
	"ranks = {x['rank']: x for x in j['ranks']}; need(sorted(ranks) == [0, 1], 'ranks 0 and 1')\n"
	"if not planted:\n"
	"    need(d['exit_code'] == 0 and j['exit_code'] == 0, 'exit code 0')\n"
	"    need(j['result'] == 'identical', 'identical: %r' % j['result'])\n"
	"    need(j['culprit_rank'] is None, 'no culprit')\n"
	"    for x in ranks.values():\n"
	"        need(x['launches']['diverged'] == 0 and x['first_divergence'] is None, 'rank %d diverged' % x['rank'])\n"
	"    print('OK'); sys.exit(0)\n"
	"need(d['exit_code'] == 1 and j['exit_code'] == 1, 'exit code 1')\n"
	"need(j['result'] == 'diverged', 'diverged: %r' % j['result'])\n"
	"need(j['verdict'] == 'kernel_nondeterministic', 'verdict: %r' % j['verdict'])\n"
	"need(j['culprit_rank'] == 1, 'culprit rank 1: %r' % j['culprit_rank'])\n"
	"need(j['collective'] is None, 'no culprit collective')\n"
	"c = ranks[1]; need(c['role'] == 'culprit', 'rank 1 culprit: %r' % c['role'])\n"
	"f = c['first_divergence']; need(f['kernel'] == 'fake_nondet_sum' and f['occurrence'] == 0, 'culprit kernel: %r' % f)\n"
	"need(f['classification'] == 'kernel_nondeterministic' and f['nccl'] is None, 'culprit class: %r' % f)\n"
	"conf = j['confirmation']; need(conf['method'] == 'replay' and conf['rank'] == 1, 'confirmation: %r' % conf)\n"
	"need(conf['verdict'] == 'confirmed non-deterministic', 'confirmed: %r' % conf)\n"
	"z = ranks[0]; need(z['role'] == 'downstream', 'rank 0 downstream: %r' % z['role'])\n"
	"need(z['via_rank'] == 1 and z['via']['op'] == 'all_reduce', 'rank 0 via all_reduce of rank 1: %r' % z['via'])\n"
	"need(z['via']['nranks'] == 2 and z['via']['count'] == 64 and z['via']['datatype'] == 'float32', 'via: %r' % z['via'])\n"
	"need(z['first_divergence']['nccl']['op'] == 'all_reduce', 'rank 0 first divergence: %r' % z['first_divergence'])\n"
	"need('all_reduce #0' in z['explanation'] and 'rank 1' in z['explanation'], 'explanation: %r' % z['explanation'])\n"
	"cmp = [x for x in d['comparisons'] if x['a'] == 'run 1 rank 1']\n"
	"need(len(cmp) == 1, 'rank 1 compared alone: %r' % [x['a'] for x in d['comparisons']])\n"
	"rep = cmp[0]['confirmation']['replayed']\n"
	"need(any(x['kernel'] == 'fake_nondet_sum' and x['occurrence'] == 0 and x['outcome'] == 'confirmed'\n"
	"         and x['distinct_results'] >= 2 for x in rep), 'replay confirmed: %r' % rep)\n"
	"print('OK')\n";

static int have_python(void)
{
	return system("python3 -c 'import json' >/dev/null 2>&1") == 0;
}

static void json_structure(const char *json, int planted)
{
	char path[700], script[700], cmd[2200];
	FILE *f;

	if (!have_python()) {
		print_message("python3 not found: the JSON checked by its text alone\n");
		return;
	}
	snprintf(path, sizeof path, "%s/check.json", tmpdir);
	snprintf(script, sizeof script, "%s/check_json.py", tmpdir);
	assert_non_null(f = fopen(path, "w"));
	fputs(json, f);
	fclose(f);
	assert_non_null(f = fopen(script, "w"));
	fputs(json_check, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "python3 '%s' '%s' %d > '%s/py.out' 2>&1", script, path, planted, tmpdir);
	int rc = system(cmd);
	snprintf(path, sizeof path, "%s/py.out", tmpdir);
	char *out = kt_slurp(path);
	if (rc != 0 || strcmp(out, "OK\n") != 0)
		fail_msg("the JSON of ktrace check (planted %d): %s\n%s", planted, out, json);
	free(out);
	unlink(path);
	snprintf(path, sizeof path, "%s/check.json", tmpdir);
	unlink(path);
	unlink(script);
}

static int built(void)
{
	static const char *const need[] = { "ktrace", "libktrace.so", "job_launch", "job_rank_app",
					    "fakenccl/libnccl.so.2", "fakecuda-real/libcuda.so.1" };
	char path[4200];

	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
		tool(path, sizeof path, need[i]);
		if (access(path, R_OK) != 0) {
			print_message("skipped: %s is not built\n", path);
			return 0;
		}
	}
	return 1;
}

static void test_planted_rank_found(void **state)
{
	(void)state;
	if (!built())
		skip();
	/* JSON */
	struct kt_run r = check_job(1, "planted-json", (char *[]){ "--json", "--quiet", NULL });
	if (r.status != 1)
		fail_msg("planted: exit %d, not 1\nstdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
	EXPECT_IN(&r, r.out, "\"culprit_rank\": 1");
	EXPECT_IN(&r, r.out, "\"role\": \"culprit\"");
	EXPECT_IN(&r, r.out, "\"role\": \"downstream\"");
	EXPECT_IN(&r, r.out, "\"kernel\": \"fake_nondet_sum\"");
	EXPECT_IN(&r, r.out, "\"verdict\": \"confirmed non-deterministic\"");
	EXPECT_IN(&r, r.out, "\"via_rank\": 1");
	json_structure(r.out, 1);
	kt_run_free(&r);
	/* text */
	r = check_job(1, "planted-text", NULL);
	if (r.status != 1)
		fail_msg("planted: exit %d, not 1\nstdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
	EXPECT_IN(&r, r.out, "job A: run 1 (2 ranks)");
	EXPECT_IN(&r, r.out, "result: DIVERGED, confirmed non-deterministic: rank 1 diverged first in causal order");
	EXPECT_IN(&r, r.out, "culprit: rank 1, fake_nondet_sum: launch ");
	EXPECT_IN(&r, r.out, "rank 0: downstream: follows from all_reduce #0 on communicator ");
	EXPECT_IN(&r, r.out, "which received rank 1's differing input");
	EXPECT_IN(&r, r.out, "rank 1: culprit: first in causal order: fake_nondet_sum");
	EXPECT_IN(&r, r.out, "verdict: confirmed non-deterministic: fake_nondet_sum");
	EXPECT_IN(&r, r.err, "KTRACE_REPLAY=kernel=fake_nondet_sum,occurrence=0,runs=8,rank=1 ");
	/* the replay ran in rank 1's process alone */
	if (count(r.err, "replay: Kernel fake_nondet_sum, occurrence 0: confirmed non-deterministic") != 1)
		fail_msg("not one replaying process:\n%s", r.err);
	kt_run_free(&r);
}

static void test_unplanted_job_identical(void **state)
{
	(void)state;
	if (!built())
		skip();
	struct kt_run r = check_job(0, "same-json", (char *[]){ "--json", "--quiet", NULL });
	if (r.status != 0)
		fail_msg("unplanted: exit %d, not 0\nstdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
	EXPECT_IN(&r, r.out, "\"jobs\": [");
	EXPECT_IN(&r, r.out, "\"result\": \"identical\"");
	assert_false(has(r.out, "\"diverged\": 1"));
	assert_false(has(r.out, "fake_nondet_sum"));
	json_structure(r.out, 0);
	kt_run_free(&r);
	r = check_job(0, "same-text", NULL);
	assert_int_equal(r.status, 0);
	EXPECT_IN(&r, r.out, "result: identical: no rank diverged");
	assert_false(has(r.err, "KTRACE_REPLAY="));
	kt_run_free(&r);
}

static int setup(void **state)
{
	const char *b = getenv("BUILD");
	char root[4096];

	(void)state;
	if (!kt_scratch_dir(tmpdir, sizeof tmpdir, "jobe2e") || !getcwd(root, sizeof root))
		return -1;
	if (!b || !*b)
		b = "build";
	if (b[0] == '/')
		snprintf(build, sizeof build, "%s", b);
	else if (snprintf(build, sizeof build, "%s/%s", root, b) >= (int)sizeof build)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_planted_rank_found),
		cmocka_unit_test(test_unplanted_job_identical),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
