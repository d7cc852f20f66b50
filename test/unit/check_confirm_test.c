/* test/unit/check_confirm_test.c: what `ktrace check` replays (tools/cli/check_confirm.c).
 *
 * The occurrence of a launch counts the launches of its kernel's name before
 * it, over every kernel id of that name (another module's too), as the
 * library counts at run time; the KTRACE_REPLAY value names it, or says why
 * it cannot; the launches to replay come in the stated order (the first
 * divergence, the last writers of its differing inputs, the next
 * divergences), each once, at most as many as asked; a replay run's trace
 * gives the verdict of the launch asked for, or why there is none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/pystack_spec.h"
#include "test/unit/diff_sim.h"
#include "tools/cli/check_confirm.h"

static char tmpdir[256];

/* A trace in memory: kernels 1 and 2 share a name (two modules), 3 is
 * another kernel, 4 has no name; launches in seq order. */
static struct tm_kernel kernels[4];
static struct tm_launch launches[8];
static struct tm_launch_look looks[8];
static struct tm_trace trace;

static void build_trace(void)
{
	static const uint64_t ids[] = { 1, 3, 2, 1, 4, 3, 2, 4 };

	memset(kernels, 0, sizeof kernels);
	memset(launches, 0, sizeof launches);
	memset(&trace, 0, sizeof trace);
	for (int i = 0; i < 4; i++) {
		kernels[i].id = (uint64_t)i + 1;
		kernels[i].name = i == 2 ? "_Z3barv" : i == 3 ? "" : "_Z3fooPf";
		kernels[i].demangled = "";
	}
	for (int i = 0; i < 8; i++) {
		launches[i].seq = 10 + 2 * (uint64_t)i; /* copies take numbers too */
		looks[i].kernel = &kernels[ids[i] - 1];
		launches[i].look = &looks[i];
	}
	trace.kernels = kernels;
	trace.nkernels = 4;
	trace.launches = launches;
	trace.nlaunches = 8;
}

static void test_occurrence_and_spec(void **state)
{
	char spec[256], why[256];

	(void)state;
	build_trace();
	assert_int_equal(ktrace_tm_occurrence(&trace, &launches[0]), 0);
	assert_int_equal(ktrace_tm_occurrence(&trace, &launches[2]), 1); /* kernel 2, after kernel 1's */
	assert_int_equal(ktrace_tm_occurrence(&trace, &launches[6]), 3);
	assert_int_equal(ktrace_tm_occurrence(&trace, &launches[5]), 1); /* _Z3barv */
	assert_int_equal(ktrace_tm_occurrence(&trace, &launches[7]), 1); /* nameless: its own id */
	assert_int_equal(ktrace_check_replay_spec(NULL, &launches[6], 3, 8, -1, spec, sizeof spec, why, sizeof why), 0);
	assert_string_equal(spec, "kernel=_Z3fooPf,occurrence=3,runs=8");
	/* a job's culprit: only its rank replays */
	assert_int_equal(ktrace_check_replay_spec(NULL, &launches[6], 3, 8, 5, spec, sizeof spec, why, sizeof why), 0);
	assert_string_equal(spec, "kernel=_Z3fooPf,occurrence=3,runs=8,rank=5");
	assert_int_equal(ktrace_check_replay_spec(NULL, &launches[7], 1, 8, -1, spec, sizeof spec, why, sizeof why), -1);
	assert_non_null(strstr(why, "mangled name is unknown"));
	kernels[2].name = "odd,name";
	assert_int_equal(ktrace_check_replay_spec(NULL, &launches[5], 1, 8, -1, spec, sizeof spec, why, sizeof why), -1);
	assert_non_null(strstr(why, "cannot carry"));
	assert_int_equal(ktrace_check_replay_spec(NULL, &launches[6], 3, 8, -1, spec, 10, why, sizeof why), -1);
	assert_non_null(strstr(why, "too long"));
	/* an NCCL operation's kernel is never replayed alone: its peers would not come */
	{
		struct tm_region coll = { .flags = KTRACE_REGIONF_COLL_BUFFER };
		struct tm_launch nccl = launches[6];
		struct tm_launch_look nccl_look = *nccl.look;

		nccl_look.nregions = 1;
		nccl.look = &nccl_look;
		nccl.regions = &coll;
		assert_int_equal(ktrace_check_replay_spec(NULL, &nccl, 3, 8, 1, spec, sizeof spec, why, sizeof why), -1);
		assert_non_null(strstr(why, "NCCL operation's kernel"));
	}
}

/* The KTRACE_PYSTACK value of a replay run: the launch by its kernel's
 * mangled name (a regex matching that name alone, parsed back as the
 * library parses it) and occurrence, the forward op for a backward kernel. */
static void test_pystack_spec(void **state)
{
	struct ktrace_pystack_spec s;
	char spec[256], why[256];

	(void)state;
	build_trace();
	assert_int_equal(ktrace_check_pystack_spec(&launches[6], 3, spec, sizeof spec), 0);
	assert_string_equal(spec, "occurrence=3,kernel=^_Z3fooPf$");
	kernels[0].name = "_ZN3$_05applyEv.cold";
	static struct tm_refs backward = { .range = { 5, KTRACE_FWSEQ_BACKWARD, 0, 77 } };
	launches[3].refs = &backward;
	assert_int_equal(ktrace_check_pystack_spec(&launches[3], 2, spec, sizeof spec), 0);
	assert_string_equal(spec, "fw_seq=77,occurrence=2,kernel=^_ZN3\\$_05applyEv\\.cold$");
	assert_int_equal(ktrace_pystack_spec_parse(spec, &s, why, sizeof why), 0);
	assert_true(s.have_kernel && s.have_fw_seq && s.fw_seq == 77 && s.occurrence == 2);
	assert_int_equal(regexec(&s.kernel, "_ZN3$_05applyEv.cold", 0, NULL, 0), 0);
	assert_int_not_equal(regexec(&s.kernel, "_ZN3$_05applyEvXcold", 0, NULL, 0), 0);
	ktrace_pystack_spec_free(&s);
	assert_int_equal(ktrace_check_pystack_spec(&launches[7], 1, spec, sizeof spec), -1); /* nameless */
	assert_int_equal(ktrace_check_pystack_spec(&launches[6], 3, spec, 12), -1);
}

/* A REPLAY record of the launch asked for gives its verdict; one of another
 * launch, none, or a malformed one say why there is none. */
static void test_take_replay(void **state)
{
	struct ktrace_replay_report rep;
	struct tm_replay rec;
	struct diff_confirm c;
	uint8_t blob[1024];
	size_t n;

	(void)state;
	build_trace();
	memset(&rep, 0, sizeof rep);
	rep.outcome = KTRACE_REPLAY_CONFIRMED;
	rep.runs_requested = rep.runs_done = 8;
	rep.distinct = 2;
	rep.occurrence = 3;
	rep.kernel = (char *)"_Z3fooPf";
	n = ktrace_replay_report_serialize(&rep, blob, sizeof blob);
	rec = (struct tm_replay){ .launch_seq = 99, .kernel_id = 7, .blob = blob, .blob_len = (uint32_t)n };
	trace.replays = &rec;
	trace.nreplays = 1;

	memset(&c, 0, sizeof c);
	c.launch = &launches[6];
	c.occurrence = 3;
	ktrace_check_take_replay(&trace, &c);
	assert_int_equal(c.have_report, 1);
	assert_int_equal(c.outcome, KTRACE_REPLAY_CONFIRMED);
	assert_int_equal(c.report.distinct, 2);
	ktrace_replay_report_free(&c.report);

	memset(&c, 0, sizeof c);
	c.launch = &launches[3];
	c.occurrence = 2; /* another occurrence than the record's */
	ktrace_check_take_replay(&trace, &c);
	assert_int_equal(c.have_report, 0);
	assert_non_null(strstr(c.why, "never reached launch 2 of _Z3fooPf"));

	memset(&c, 0, sizeof c);
	c.launch = &launches[6];
	c.occurrence = 3;
	rec.blob_len = 10;
	ktrace_check_take_replay(&trace, &c);
	assert_int_equal(c.have_report, 0);
	assert_non_null(strstr(c.why, "malformed"));
	trace.replays = NULL;
	trace.nreplays = 0;
}

static void compare_sims(struct tm_trace *a, struct tm_trace *b, struct diff_result *r, const struct sim_opts *oa,
			 const struct sim_opts *ob)
{
	char pa[512], pb[512], err[512];
	struct diff_opts o = { 0 };

	snprintf(pa, sizeof pa, "%s/a.ktrace", tmpdir);
	snprintf(pb, sizeof pb, "%s/b.ktrace", tmpdir);
	if (sim_write(pa, oa, err, sizeof err) || sim_write(pb, ob, err, sizeof err))
		fail_msg("sim_write: %s", err);
	if (ktrace_tm_load(a, pa, 0, err, sizeof err) || ktrace_tm_load(b, pb, 0, err, sizeof err))
		fail_msg("load: %s", err);
	if (ktrace_diff_compare(a, b, &o, r, err, sizeof err))
		fail_msg("compare: %s", err);
}

/* reduce_sum goes wrong in step 1: it comes first; the launches downstream
 * follow, each once (their inputs' last writers are launches already listed). */
static void test_candidates_nondet(void **state)
{
	struct sim_opts oa, ob;
	struct tm_trace a, b;
	struct diff_result r;
	struct check_candidate c[8];
	const struct diff_result *rs[1] = { &r };
	size_t n;

	(void)state;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	ob.nondet_iter = 1;
	compare_sims(&a, &b, &r, &oa, &ob);
	n = ktrace_check_candidates(rs, 1, c, 8);
	assert_true(n >= 3);
	assert_ptr_equal(c[0].launch, r.divs[0].la);
	assert_string_equal(c[0].role, "first divergence");
	assert_ptr_equal(c[1].launch, r.divs[1].la);
	assert_string_equal(c[1].role, "divergence 2");
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			assert_ptr_not_equal(c[i].launch, c[j].launch);
	assert_int_equal(ktrace_check_candidates(rs, 1, c, 2), 2);
	assert_int_equal(ktrace_check_candidates(rs, 1, c, 0), 0);
	ktrace_diff_result_free(&r);
	ktrace_tm_free(&a);
	ktrace_tm_free(&b);
}

/* The first divergence's input differs, written by a launch not hashed in
 * B: after the divergence itself comes that writer, before the next divergence. */
static void test_candidates_writer(void **state)
{
	struct sim_opts oa, ob;
	struct tm_trace a, b;
	struct diff_result r;
	struct check_candidate c[8];
	const struct diff_result *rs[1] = { &r };
	size_t n;

	(void)state;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	ob.unhashed_iter = 1;
	ob.nondet_iter = 1;
	compare_sims(&a, &b, &r, &oa, &ob);
	assert_int_equal(r.divs[0].cls, DIFF_CLASS_INPUTS_DIFFER);
	assert_int_equal(r.divs[0].inputs[0].wa.type, DIFF_WRITER_LAUNCH);
	n = ktrace_check_candidates(rs, 1, c, 8);
	assert_true(n >= 3);
	assert_ptr_equal(c[0].launch, r.divs[0].la);
	assert_ptr_equal(c[1].launch, r.divs[0].inputs[0].wa.launch);
	assert_non_null(strstr(c[1].role, "last writer of b_ptr, input of matmul_kernel (launch 18)"));
	assert_ptr_equal(c[2].launch, r.divs[1].la);
	ktrace_diff_result_free(&r);
	ktrace_tm_free(&a);
	ktrace_tm_free(&b);
}

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "%s/ktrace-checkconfirm-test.XXXXXX", t && *t ? t : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
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
		cmocka_unit_test(test_occurrence_and_spec),
		cmocka_unit_test(test_pystack_spec),
		cmocka_unit_test(test_take_replay),
		cmocka_unit_test(test_candidates_nondet),
		cmocka_unit_test(test_candidates_writer),
	};
	return cmocka_run_group_tests_name("check_confirm", tests, setup, teardown);
}
