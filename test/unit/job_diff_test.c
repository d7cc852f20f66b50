/* test/unit/job_diff_test.c: the job diff, on two runs of fake distributed jobs
 * (cmocka).
 *
 * ktgen --job writes each scenario (test/tools/ktgen_job.c, by the job
 * simulator test/unit/job_sim.c) as two directories of per-rank traces;
 * ktrace-diff compares them as it does a user's, and its text and JSON
 * reports are held to test/golden/job/<scenario>.txt / .json (its name's
 * '-' as '_', without "job-")
 * (KTRACE_UPDATE_GOLDEN=1 rewrites them: review the diff).  The verdict is
 * also checked in-process through tools/model/job_diff.h: the culprit rank
 * and kernel, each rank's role and the operation its difference came
 * through, the findings.  Then the command line's forms (two directories,
 * two lists separated by --, options anywhere) and its mistakes, and traces
 * that are cut, corrupt or not traces at all: a finding or an error, never a
 * crash.  Last, `ktrace check` of a job under a fake launcher
 * (test/unit/job_fakeprog.c): found by the JOB records or the launcher's
 * name, each run's traces in a directory of their own, one verdict, the
 * culprit replayed on its rank alone (rank= in KTRACE_REPLAY).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/ktrace_format.h"
#include "test/run_capture.h"
#include "test/scratch.h"
#include "test/unit/job_sim.h"
#include "tools/model/job_diff.h"

static char tmpdir[400], build[4200], root[4096];

/* Run argv in directory dir (NULL: here), its stdout and stderr captured. */
static struct kt_run run_in(const char *dir, char *const *argv)
{
	return kt_run_captured(tmpdir, dir, argv);
}

static void tool(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%.380s/%s", build, name);
}

/* The scenario's two runs, in <tmpdir>/<scenario>/a and /b (made once). */
static void scenario(const char *name, char *dir, size_t cap)
{
	char gen[512];
	struct stat st;

	snprintf(dir, cap, "%s/%s", tmpdir, name);
	if (stat(dir, &st) == 0)
		return;
	tool(gen, sizeof gen, "ktgen");
	struct kt_run r = run_in(NULL, (char *[]){ gen, "--job", (char *)name, dir, NULL });
	if (r.status != 0)
		fail_msg("ktgen --job %s: %s", name, r.err);
	kt_run_free(&r);
}

/* got against test/golden/job/<name>, or rewritten when asked. */
static void golden(const char *name, const char *got)
{
	char path[4400];
	const char *upd = getenv("KTRACE_UPDATE_GOLDEN");

	snprintf(path, sizeof path, "%s/test/golden/job/%s", root, name);
	if (upd && *upd && strcmp(upd, "0")) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(got, f);
		fclose(f);
		return;
	}
	char *want = kt_slurp(path);
	if (!*want)
		fail_msg("%s: missing golden file (run with KTRACE_UPDATE_GOLDEN=1 and review it)", path);
	if (strcmp(want, got) != 0) {
		fprintf(stderr, "--- %s differs; got:\n%s\n", path, got);
		free(want);
		fail_msg("%s: output differs from the golden file", path);
	}
	free(want);
}

/* ktrace-diff a b in the scenario's directory: its text and JSON against the
 * golden files <name>.txt and .json; the exit status must be `status`. */
static void diff_golden(const char *name, int status)
{
	char dir[512], diff[512], file[128];

	scenario(name, dir, sizeof dir);
	tool(diff, sizeof diff, "ktrace-diff");
	for (int json = 0; json < 2; json++) {
		struct kt_run r = run_in(dir, json ? (char *[]){ diff, "--json", "a", "b", NULL } :
					       (char *[]){ diff, "a", "b", NULL });
		if (r.status != status)
			fail_msg("%s: ktrace-diff exit %d, expected %d: %s", name, r.status, status, r.err);
		snprintf(file, sizeof file, "%s.%s", name + 4, json ? "json" : "txt");
		for (char *c = file; *c; c++)
			*c = *c == '-' ? '_' : *c;
		golden(file, r.out);
		kt_run_free(&r);
	}
}

/* ---- the verdict, in-process --------------------------------------------------- */

/* ktrace_job_diff of the scenario's runs (partial: --partial). */
static void job_of(const char *name, int partial, struct job_result *r)
{
	char dir[512], da[600], db[600], err[1024];
	char **pa, **pb;
	size_t na, nb;
	struct job_diff_opts o = { .diff = { .allow_truncated = partial }, .label_a = "a", .label_b = "b" };

	scenario(name, dir, sizeof dir);
	snprintf(da, sizeof da, "%s/a", dir);
	snprintf(db, sizeof db, "%s/b", dir);
	if (ktrace_job_list_dir(da, &pa, &na, err, sizeof err) || ktrace_job_list_dir(db, &pb, &nb, err, sizeof err))
		fail_msg("%s", err);
	if (ktrace_job_diff((const char *const *)pa, na, (const char *const *)pb, nb, &o, r, err, sizeof err))
		fail_msg("%s: %s", name, err);
	ktrace_job_paths_free(pa, na);
	ktrace_job_paths_free(pb, nb);
}

static const struct job_rank *rank_of(const struct job_result *r, int32_t rank)
{
	for (size_t i = 0; i < r->nranks; i++)
		if (r->ranks[i].rank == rank)
			return &r->ranks[i];
	fail_msg("no rank %d", rank);
	return NULL;
}

/* rank's first divergence came through operation op (number seq) from rank `from`. */
static void assert_via(const struct job_result *r, int32_t rank, uint32_t op, uint64_t seq, int32_t from)
{
	const struct job_rank *e = rank_of(r, rank);

	if (e->role != JOB_ROLE_DOWNSTREAM || !e->via.valid || e->via.op != op || e->via.comm_seq != seq ||
	    e->via_rank != from)
		fail_msg("rank %d: role %s, via %s #%llu from rank %d; expected downstream via %s #%llu from rank %d", rank,
			 ktrace_job_role_name(e->role), ktrace_coll_op_name(e->via.op), (unsigned long long)e->via.comm_seq,
			 e->via_rank, ktrace_coll_op_name(op), (unsigned long long)seq, from);
}

static int has_finding(const struct job_result *r, int kind, int32_t rank)
{
	for (size_t i = 0; i < r->nfindings; i++)
		if (r->findings[i].kind == kind && r->findings[i].rank == rank)
			return 1;
	return 0;
}

static void assert_culprit(const struct job_result *r, int verdict, int32_t rank, const char *kernel, uint64_t seq)
{
	assert_int_equal(r->verdict, verdict);
	assert_true(r->culprit >= 0);
	const struct job_rank *e = &r->ranks[r->culprit];
	assert_int_equal(e->rank, rank);
	assert_true(e->has_div);
	assert_string_equal(e->div.mangled, kernel);
	assert_int_equal(e->div.seq_a, seq);
}

static void test_identical(void **state)
{
	struct job_result r;

	(void)state;
	job_of("job-identical", 0, &r);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.verdict, JOB_VERDICT_IDENTICAL);
	assert_int_equal(r.nranks, 4);
	assert_int_equal(r.coll_matched, 2);
	assert_int_equal(r.digests_compared, 16);
	for (size_t i = 0; i < r.nranks; i++)
		assert_int_equal(r.ranks[i].role, JOB_ROLE_IDENTICAL);
	ktrace_job_result_free(&r);
	diff_golden("job-identical", 0);
}

/* Rank 1's k_norm, before the all-reduce: every other rank diverges at the
 * all-reduce, whose local inputs were identical (its own diff alone would
 * call the NCCL kernel non-deterministic there). */
static void test_nondet_before_allreduce(void **state)
{
	struct job_result r;

	(void)state;
	job_of("job-nondet", 0, &r);
	assert_int_equal(r.status, 1);
	assert_culprit(&r, JOB_VERDICT_KERNEL_NONDET, 1, "k_norm", 2);
	assert_int_equal(r.ranks[r.culprit].div.occurrence, 0);
	assert_int_equal(r.ranks[r.culprit].div.cls, DIFF_CLASS_KERNEL_NONDET);
	for (int32_t k = 0; k < 4; k++) {
		if (k == 1)
			continue;
		assert_via(&r, k, KTRACE_COLL_ALL_REDUCE, 0, 1);
		assert_int_equal(rank_of(&r, k)->div.cls, DIFF_CLASS_KERNEL_NONDET); /* what its own diff says */
		assert_true(rank_of(&r, k)->div.nccl);
	}
	ktrace_job_result_free(&r);
	diff_golden("job-nondet", 1);
}

/* The same without the collectives' buffer digests: causal order alone. */
static void test_causal_order_alone(void **state)
{
	struct job_result r;

	(void)state;
	job_of("job-causal", 0, &r);
	assert_culprit(&r, JOB_VERDICT_KERNEL_NONDET, 1, "k_norm", 2);
	assert_int_equal(r.digests_compared, 0);
	for (int32_t k = 0; k < 4; k++)
		if (k != 1)
			assert_via(&r, k, KTRACE_COLL_ALL_REDUCE, 0, 1);
	ktrace_job_result_free(&r);
	diff_golden("job-causal", 1);
}

/* Identical inputs everywhere, the all-reduce's result differs: the
 * collective is the culprit, named with NCCL's settings of each run. */
static void test_nondet_collective(void **state)
{
	struct job_result r;

	(void)state;
	job_of("job-coll-nondet", 0, &r);
	assert_int_equal(r.status, 1);
	assert_int_equal(r.verdict, JOB_VERDICT_COLLECTIVE_NONDET);
	assert_int_equal(r.coll.op.op, KTRACE_COLL_ALL_REDUCE);
	assert_int_equal(r.coll.op.comm_seq, 0);
	assert_true(r.coll.inputs_compared);
	assert_int_equal(r.coll.ranks_differing, 4);
	assert_string_equal(r.coll.version_a, "2.21.5");
	assert_string_equal(r.coll.settings_differ, "NCCL_ALGO (Ring in A, Tree in B)");
	for (size_t i = 0; i < r.nranks; i++)
		assert_int_equal(r.ranks[i].role, JOB_ROLE_COLLECTIVE);
	ktrace_job_result_free(&r);
	diff_golden("job-coll-nondet", 1);
}

static void test_host_input(void **state)
{
	struct job_result r;

	(void)state;
	job_of("job-host-input", 0, &r);
	assert_culprit(&r, JOB_VERDICT_INPUTS_DIFFER, 2, "k_gemm", 1);
	assert_via(&r, 0, KTRACE_COLL_ALL_REDUCE, 0, 2);
	ktrace_job_result_free(&r);
	diff_golden("job-host-input", 1);
}

/* A pipeline: rank 1's difference goes to 2 by a send, from 2 to 3; rank 0 is upstream. */
static void test_send_recv_chain(void **state)
{
	struct job_result r;

	(void)state;
	job_of("job-sendrecv", 0, &r);
	assert_culprit(&r, JOB_VERDICT_KERNEL_NONDET, 1, "k_norm", 1);
	assert_int_equal(rank_of(&r, 0)->role, JOB_ROLE_IDENTICAL);
	assert_via(&r, 2, KTRACE_COLL_RECV, 0, 1);
	assert_via(&r, 3, KTRACE_COLL_RECV, 0, 2);
	assert_int_equal(r.p2p_matched, 3);
	ktrace_job_result_free(&r);
	diff_golden("job-sendrecv", 1);
}

/* Tensor-parallel pairs inside data-parallel pairs, on two hosts. */
static void test_two_communicators(void **state)
{
	struct job_result r;

	(void)state;
	job_of("job-two-comms", 0, &r);
	assert_culprit(&r, JOB_VERDICT_KERNEL_NONDET, 2, "k_gemm", 0);
	assert_via(&r, 3, KTRACE_COLL_ALL_REDUCE, 0, 2); /* tensor-parallel {2, 3} */
	assert_via(&r, 0, KTRACE_COLL_ALL_REDUCE, 0, 2); /* data-parallel {0, 2} */
	assert_via(&r, 1, KTRACE_COLL_ALL_REDUCE, 0, 3); /* data-parallel {1, 3}: 3's, from 2 */
	assert_int_not_equal(rank_of(&r, 0)->via.comm_id, rank_of(&r, 3)->via.comm_id);
	ktrace_job_result_free(&r);
	diff_golden("job-two-comms", 1);
}

/* Ranks that never communicate through NCCL: nothing orders them, and the
 * report says so; the lowest rank that diverged is named. */
static void test_no_collectives(void **state)
{
	struct jsim_program p;
	struct jsim_run oa, ob;
	struct job_result r;
	char dir[600], err[512], da[700], db[700];

	(void)state;
	jsim_init(&p, 3);
	jsim_compute(&p, 0, 0, 1, 0, 0);
	jsim_compute(&p, 0, 2, 2, 1, 0);
	p.nondet_step = 1, p.nondet_rank = 2;
	jsim_run_defaults(&oa, 0);
	jsim_run_defaults(&ob, 1);
	snprintf(dir, sizeof dir, "%s/no-nccl", tmpdir);
	snprintf(da, sizeof da, "%s/a", dir);
	snprintf(db, sizeof db, "%s/b", dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	if (jsim_write(da, &p, &oa, err, sizeof err) || jsim_write(db, &p, &ob, err, sizeof err))
		fail_msg("%s", err);
	job_of("no-nccl", 0, &r);
	assert_culprit(&r, JOB_VERDICT_KERNEL_NONDET, 2, "k_norm", 1);
	assert_int_equal(r.coll_matched, 0);
	assert_true(r.nwarnings == 1 && strstr(r.warnings[0], "no rank recorded an NCCL operation"));
	ktrace_job_result_free(&r);
}

/* ---- findings: ranks that do not pair up ------------------------------------- */

static void test_collective_count_mismatch(void **state)
{
	struct job_result r;

	(void)state;
	job_of("job-coll-mismatch", 0, &r);
	assert_int_equal(r.status, 1);
	assert_int_equal(r.verdict, JOB_VERDICT_RANKS_DIFFER);
	assert_true(has_finding(&r, JOB_FIND_COLLECTIVES, 2));
	assert_int_equal(r.nfindings, 1);
	ktrace_job_result_free(&r);
	diff_golden("job-coll-mismatch", 1);
}

static void test_missing_rank(void **state)
{
	struct job_result r;

	(void)state;
	job_of("job-missing-rank", 0, &r);
	assert_int_equal(r.status, 1);
	assert_true(has_finding(&r, JOB_FIND_RANK_MISSING, 3));
	assert_int_equal(rank_of(&r, 3)->role, JOB_ROLE_NOT_COMPARED);
	assert_int_equal(rank_of(&r, 2)->role, JOB_ROLE_IDENTICAL);
	ktrace_job_result_free(&r);
	diff_golden("job-missing-rank", 1);
}

static void test_world_size_mismatch(void **state)
{
	struct job_result r;

	(void)state;
	job_of("job-world-size", 0, &r);
	assert_int_equal(r.status, 2);
	assert_int_equal(r.verdict, JOB_VERDICT_NOT_COMPARED);
	assert_int_equal(r.world_a, 4);
	assert_int_equal(r.world_b, 2);
	assert_true(has_finding(&r, JOB_FIND_WORLD_SIZE, -1));
	ktrace_job_result_free(&r);
	diff_golden("job-world-size", 2);
}

/* Rank 3 killed in run B: its trace is compared as far as it goes; a finding,
 * a warning with --partial; the culprit is found all the same. */
static void test_truncated_rank(void **state)
{
	struct job_result r;

	(void)state;
	job_of("job-truncated", 0, &r);
	assert_int_equal(r.status, 1);
	assert_true(has_finding(&r, JOB_FIND_TRUNCATED, 3));
	assert_false(has_finding(&r, JOB_FIND_COLLECTIVES, 3)); /* what it did not live to do is no finding */
	assert_true(rank_of(&r, 3)->truncated_b);
	assert_culprit(&r, JOB_VERDICT_KERNEL_NONDET, 1, "k_norm", 2);
	ktrace_job_result_free(&r);
	job_of("job-truncated", 1, &r);
	assert_false(has_finding(&r, JOB_FIND_TRUNCATED, 3));
	assert_int_equal(r.status, 1);
	ktrace_job_result_free(&r);
	diff_golden("job-truncated", 1);
}

/* ---- the command line ------------------------------------------------------------ */

static void expect(const struct kt_run *r, int status, const char *out, const char *err)
{
	if (r->status != status || (out && !strstr(r->out, out)) || (err && !strstr(r->err, err)))
		fail_msg("expected exit %d with '%s' on stdout and '%s' on stderr; got %d:\n%s\n%s", status,
			 out ? out : "", err ? err : "", r->status, r->out, r->err);
}

/* Two lists of traces separated by --, as a shell's globs give them, options
 * before, between and after. */
static void test_lists_of_traces(void **state)
{
	char dir[512], diff[512];
	char *a[4] = { "a/r0-p1000.ktrace", "a/r1-p1001.ktrace", "a/r2-p1002.ktrace", "a/r3-p1003.ktrace" };
	char *b[4] = { "b/r0-p2000.ktrace", "b/r1-p2001.ktrace", "b/r2-p2002.ktrace", "b/r3-p2003.ktrace" };

	(void)state;
	scenario("job-nondet", dir, sizeof dir);
	tool(diff, sizeof diff, "ktrace-diff");
	struct kt_run r = run_in(dir, (char *[]){ diff, a[0], a[1], a[2], a[3], "--", b[3], b[2], b[1], b[0], NULL });
	expect(&r, 1, "culprit: rank 1, k_norm: launch 2 in A", NULL);
	expect(&r, 1, "job A: 4 traces before -- (4 ranks)", NULL);
	kt_run_free(&r);
	r = run_in(dir, (char *[]){ diff, "--json", a[0], a[1], a[2], a[3], "--all", "--", b[0], b[1], b[2], b[3], NULL });
	expect(&r, 1, "\"verdict\": \"kernel_nondeterministic\"", NULL);
	kt_run_free(&r);
	r = run_in(dir, (char *[]){ diff, "--", a[0], a[1], a[2], a[3], "--", b[0], b[1], b[2], b[3], "--quiet", NULL });
	expect(&r, 2, "culprit: rank 1", "--quiet"); /* after the first --, nothing is an option: a trace not found */
	kt_run_free(&r);
	r = run_in(dir, (char *[]){ diff, "--quiet", "a", "b", NULL });
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	kt_run_free(&r);
}

static void test_command_line_mistakes(void **state)
{
	char dir[512], diff[512];

	(void)state;
	scenario("job-identical", dir, sizeof dir);
	tool(diff, sizeof diff, "ktrace-diff");
	struct kt_run r = run_in(dir, (char *[]){ diff, "a", "b/r0-p2000.ktrace", NULL });
	expect(&r, 2, NULL, "give two traces or two run directories, not one of each");
	kt_run_free(&r);
	r = run_in(dir, (char *[]){ diff, "--junit", "j.xml", "a", "b", NULL });
	expect(&r, 2, NULL, "--junit is for two traces");
	kt_run_free(&r);
	r = run_in(dir, (char *[]){ diff, "a/r0-p1000.ktrace", "--", NULL });
	expect(&r, 2, NULL, "give run A's traces before -- and run B's after it");
	kt_run_free(&r);
	r = run_in(dir, (char *[]){ diff, "a", "--", "b", NULL });
	expect(&r, 2, NULL, "is a directory");
	kt_run_free(&r);
	r = run_in(dir, (char *[]){ diff, "a", ".", NULL });
	expect(&r, 2, "result: NOT COMPARED", "several traces of rank 0 launched kernels"); /* "." holds a/ and b/ */
	kt_run_free(&r);
	char empty[600];
	snprintf(empty, sizeof empty, "%s/empty", tmpdir);
	assert_int_equal(mkdir(empty, 0700), 0);
	r = run_in(dir, (char *[]){ diff, empty, "b", NULL });
	expect(&r, 2, NULL, "empty holds no trace");
	kt_run_free(&r);
	rmdir(empty);
}

/* ---- traces that are cut, corrupt or no traces ---------------------------------- */

/* A copy of scenario job-nondet's runs in <tmpdir>/<name>, to damage. */
static void damaged_copy(const char *name, char *dir, size_t cap)
{
	char src[512], cmd[2048];

	scenario("job-nondet", src, sizeof src);
	snprintf(dir, cap, "%s/%s", tmpdir, name);
	snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", dir, src, dir);
	assert_int_equal(system(cmd), 0);
}

static void write_bytes(const char *dir, const char *file, const void *p, size_t n, off_t at, int trunc)
{
	char path[700];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CREAT | (trunc ? O_TRUNC : 0), 0600);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, p, n, at), (ssize_t)n);
	close(fd);
}

static void test_damaged_traces(void **state)
{
	char dir[512], diff[512], path[700];
	uint8_t junk[64];

	(void)state;
	tool(diff, sizeof diff, "ktrace-diff");
	memset(junk, 0x5a, sizeof junk);
	/* not a trace at all, among the ranks' */
	damaged_copy("junk", dir, sizeof dir);
	write_bytes(dir, "b/notes.ktrace", "hello\n", 6, 0, 1);
	struct kt_run r = run_in(dir, (char *[]){ diff, "a", "b", NULL });
	expect(&r, 2, "culprit: rank 1", "b/notes.ktrace");
	kt_run_free(&r);
	/* rank 2's trace in B cut inside its first frame: no header, no rank: rank 2 is missing */
	damaged_copy("cut", dir, sizeof dir);
	snprintf(path, sizeof path, "%s/b/r2-p2002.ktrace", dir);
	assert_int_equal(truncate(path, 40), 0);
	r = run_in(dir, (char *[]){ diff, "--json", "a", "b", NULL });
	expect(&r, 1, "\"kind\": \"rank_missing\"", NULL);
	expect(&r, 1, "ends before its first record", NULL);
	kt_run_free(&r);
	/* rank 3's trace in B corrupt in its middle */
	damaged_copy("corrupt", dir, sizeof dir);
	snprintf(path, sizeof path, "%s/b/r3-p2003.ktrace", dir);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	write_bytes(dir, "b/r3-p2003.ktrace", junk, sizeof junk, st.st_size / 2, 0);
	r = run_in(dir, (char *[]){ diff, "a", "b", NULL });
	assert_true(r.status == 1 || r.status == 2);
	assert_non_null(strstr(r.out, "rank 1"));
	kt_run_free(&r);
	/* a directory of nothing but junk */
	damaged_copy("alljunk", dir, sizeof dir);
	for (int k = 0; k < 4; k++) {
		char f[64];
		snprintf(f, sizeof f, "b/r%d-p%d.ktrace", k, 2000 + k);
		write_bytes(dir, f, junk, sizeof junk, 0, 1);
	}
	r = run_in(dir, (char *[]){ diff, "a", "b", NULL });
	expect(&r, 2, "result: NOT COMPARED", NULL);
	kt_run_free(&r);
}

/* ---- ktrace check of a job ---------------------------------------------------- */

/* ktrace check [args] -- prog under the fake library, the fake launcher's
 * ranks in mode `mode`; the traces in <tmpdir>/<dir>. */
static struct kt_run check_job(const char *mode, const char *prog, const char *dir, char **args)
{
	char ktrace[512], lib[512], counter[600], tdir[600];
	char *argv[16];
	int n = 0;

	tool(ktrace, sizeof ktrace, "ktrace");
	tool(lib, sizeof lib, "diff_fakelib.so");
	snprintf(counter, sizeof counter, "%s/counter", tmpdir);
	snprintf(tdir, sizeof tdir, "%s/%s", tmpdir, dir);
	unlink(counter);
	setenv("KTRACE_LIB", lib, 1);
	/* a sanitized launcher under the (unsanitized) fake library preloaded */
	char *asan = getenv("ASAN_OPTIONS") ? strdup(getenv("ASAN_OPTIONS")) : NULL;
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
	setenv("JOB_FAKE_MODE", mode, 1);
	setenv("JOB_FAKE_COUNTER", counter, 1);
	argv[n++] = ktrace;
	argv[n++] = "check";
	argv[n++] = "--dir";
	argv[n++] = tdir;
	while (args && *args && n < 12)
		argv[n++] = *args++;
	argv[n++] = "--";
	argv[n++] = (char *)prog;
	argv[n] = NULL;
	struct kt_run r = run_in(tmpdir, argv); /* a report file asked for lands there */
	unsetenv("KTRACE_LIB");
	if (asan)
		setenv("ASAN_OPTIONS", asan, 1);
	else
		unsetenv("ASAN_OPTIONS");
	free(asan);
	return r;
}

static int exists(const char *dir, const char *sub)
{
	char path[700];
	struct stat st;

	snprintf(path, sizeof path, "%s/%s/%s", tmpdir, dir, sub);
	return stat(path, &st) == 0;
}

/* A job found by its JOB records (the launcher's name is no launcher's): run
 * 1's traces move into run1/, the culprit is replayed on its rank alone. */
static void test_check_job_confirmed(void **state)
{
	char prog[512];

	(void)state;
	tool(prog, sizeof prog, "job_fakeprog");
	struct kt_run r = check_job("nondet", prog, "check-nondet", NULL);
	expect(&r, 1, "result: DIVERGED, confirmed non-deterministic: rank 1 diverged first in causal order", NULL);
	expect(&r, 1, "verdict: confirmed non-deterministic: k_norm (launch 2 in A)", NULL);
	expect(&r, 1, "3 of 1024 elements differ", "KTRACE_REPLAY=kernel=k_norm,occurrence=0,runs=8,rank=1");
	assert_true(exists("check-nondet", "run1") && exists("check-nondet", "run2") && exists("check-nondet", "replay1"));
	kt_run_free(&r);
	r = check_job("nondet", prog, "check-json", (char *[]){ "--json", "--quiet", NULL });
	expect(&r, 1, "\"jobs\": [", NULL);
	expect(&r, 1, "\"outcome\": \"confirmed\"", NULL);
	expect(&r, 1, "\"culprit_rank\": 1", NULL);
	kt_run_free(&r);
}

/* A launcher by its name: each run in a directory of its own from run 1 on. */
static void test_check_job_launcher(void **state)
{
	char prog[512], link[600];

	(void)state;
	tool(prog, sizeof prog, "job_fakeprog");
	snprintf(link, sizeof link, "%s/torchrun", tmpdir);
	unlink(link);
	assert_int_equal(symlink(prog, link), 0);
	struct kt_run r = check_job("same", link, "check-same", NULL);
	expect(&r, 0, "result: identical: no rank diverged", NULL);
	assert_true(exists("check-same", "run1") && exists("check-same", "run2"));
	kt_run_free(&r);
	/* a non-deterministic collective: no replay, the digests of every rank */
	r = check_job("coll", link, "check-coll", NULL);
	expect(&r, 1, "all_reduce #0 on communicator", NULL);
	expect(&r, 1, "a collective cannot be replayed in isolation", NULL);
	assert_null(strstr(r.err, "KTRACE_REPLAY="));
	kt_run_free(&r);
	/* report options of one process's comparison: refused before anything runs */
	r = check_job("same", link, "check-junit", (char *[]){ "--junit", "j.xml", NULL });
	expect(&r, 2, NULL, "--junit is for one process's comparison");
	assert_false(exists("check-junit", "run1"));
	assert_true(exists(".", "j.xml")); /* saying what failed, as every report of a failed check does */
	kt_run_free(&r);
	unlink(link);
}

static int setup(void **state)
{
	const char *b = getenv("BUILD");

	(void)state;
	if (!kt_scratch_dir(tmpdir, sizeof tmpdir, "jobdiff") || !getcwd(root, sizeof root))
		return -1;
	if (!b || !*b)
		b = "build";
	if (b[0] == '/')
		snprintf(build, sizeof build, "%s", b);
	else
		snprintf(build, sizeof build, "%s/%s", root, b);
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
		cmocka_unit_test(test_identical),
		cmocka_unit_test(test_nondet_before_allreduce),
		cmocka_unit_test(test_causal_order_alone),
		cmocka_unit_test(test_nondet_collective),
		cmocka_unit_test(test_host_input),
		cmocka_unit_test(test_send_recv_chain),
		cmocka_unit_test(test_two_communicators),
		cmocka_unit_test(test_no_collectives),
		cmocka_unit_test(test_collective_count_mismatch),
		cmocka_unit_test(test_missing_rank),
		cmocka_unit_test(test_world_size_mismatch),
		cmocka_unit_test(test_truncated_rank),
		cmocka_unit_test(test_lists_of_traces),
		cmocka_unit_test(test_command_line_mistakes),
		cmocka_unit_test(test_damaged_traces),
		cmocka_unit_test(test_check_job_confirmed),
		cmocka_unit_test(test_check_job_launcher),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
