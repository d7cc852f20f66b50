/* test/unit/replay_launch_test.c: KTRACE_REPLAY in the library (cmocka).
 *
 * Runs build/replay_app on the fake driver with real memory
 * (build/fakecuda-real first on LD_LIBRARY_PATH) under
 * LD_PRELOAD=build/libktrace.so with KTRACE_REPLAY, and checks:
 *  - the trace holds one REPLAY record for the launch the spec names (its
 *    launch_seq is that LAUNCH record's, its kernel_id that kernel's), with
 *    the outcome the kernel deserves: confirmed for fake_nondet_sum, not
 *    reproduced for fake_add_one, not replayable beyond the budgets; the
 *    buffers are the launch's allocations, named and typed as the kernel's
 *    metadata says; a NOTE record and one stderr line carry the paragraph;
 *  - the program's own outputs equal a plain run's;
 *  - with hashing off, and with another thread launching meanwhile;
 *  - an occurrence never reached: no REPLAY record; a bad value: one line
 *    naming KTRACE_REPLAY, no trace, the program runs;
 *  - rank=N: only the process of job rank N (RANK, OMPI_COMM_WORLD_RANK,
 *    PMI_RANK, SLURM_PROCID, as the JOB record) replays; one of another
 *    rank, or of none, traces as without the spec.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/ktrace_format.h"
#include "format/replay_report.h"
#include "format/trace_reader.h"

static char build_dir[PATH_MAX], tmp_dir[PATH_MAX], trace_path[PATH_MAX + 32];

struct run_out {
	int status;
	char out[1 << 14], err[1 << 14];
};

static void slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

/* replay_app MODE with the extra environment env (NULL-terminated
 * "NAME=VALUE"), traced when traced is set. */
static void run_app(const char *mode, int traced, const char *const *env, struct run_out *r)
{
	char app[PATH_MAX + 32], o[PATH_MAX + 32], e[PATH_MAX + 32];
	pid_t pid;
	int st;

	snprintf(app, sizeof(app), "%s/replay_app", build_dir);
	snprintf(o, sizeof(o), "%s/stdout", tmp_dir);
	snprintf(e, sizeof(e), "%s/stderr", tmp_dir);
	unlink(trace_path);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char libpath[PATH_MAX + 32], lib[PATH_MAX + 32];
		int fo = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		snprintf(libpath, sizeof(libpath), "%s/fakecuda-real", build_dir);
		snprintf(lib, sizeof(lib), "%s/libktrace.so", build_dir);
		setenv("LD_LIBRARY_PATH", libpath, 1);
		if (traced) {
			setenv("LD_PRELOAD", lib, 1);
			setenv("KTRACE_OUTPUT", trace_path, 1);
			setenv("KTRACE_QUIET", "1", 1);
		}
		for (; env && *env; env++)
			putenv((char *)*env);
		if (fo < 0 || fe < 0)
			_exit(120);
		dup2(fo, 1);
		dup2(fe, 2);
		execl(app, app, mode, (char *)NULL);
		_exit(121);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	slurp(o, r->out, sizeof(r->out));
	slurp(e, r->err, sizeof(r->err));
}

/* What the trace says about replays. */
#define MAX_VIEW 512
struct trace_view {
	unsigned replays, replay_notes, launches, kernels;
	struct ktrace_rec_replay rec;
	struct ktrace_replay_report report;     /* the first REPLAY record's */
	uint64_t seq[MAX_VIEW], kernel[MAX_VIEW]; /* launch_seq and kernel_id of each launch */
	uint64_t kernel_id[16];
	char kernel_name[16][64];
};

static void view_kernel(struct trace_view *v, const void *rec, size_t len)
{
	struct ktrace_rec_kernel k;

	if (ktrace_decode_kernel(rec, len, &k) || v->kernels == 16)
		return;
	v->kernel_id[v->kernels] = k.kernel_id;
	snprintf(v->kernel_name[v->kernels++], 64, "%.*s", (int)k.name.len, k.name.ptr);
}

static void view_record(struct trace_view *v, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	struct ktrace_rec_launch l;
	struct ktrace_rec_note n;
	struct ktrace_rec_replay r;

	if (p->type == KTRACE_REC_LAUNCH && ktrace_decode_launch(rec, len, &l) == 0) {
		if (v->launches < MAX_VIEW) {
			v->seq[v->launches] = l.launch_seq;
			v->kernel[v->launches] = l.kernel_id;
		}
		v->launches++;
	} else if (p->type == KTRACE_REC_KERNEL) {
		view_kernel(v, rec, len);
	} else if (p->type == KTRACE_REC_NOTE && ktrace_decode_note(rec, len, &n) == 0) {
		v->replay_notes += n.code == KTRACE_NOTE_CODE_REPLAY;
	} else if (p->type == KTRACE_REC_REPLAY) {
		assert_int_equal(ktrace_decode_replay(rec, len, &r), 0);
		if (!v->replays++) {
			v->rec = r;
			assert_int_equal(ktrace_replay_report_parse(r.blob, r.blob_len, &v->report), 0);
		}
	}
}

static void read_trace(struct trace_view *v)
{
	char err[512];
	struct ktrace_reader *rd = ktrace_reader_open(trace_path, err, sizeof(err));
	const void *rec;
	size_t len;

	memset(v, 0, sizeof(*v));
	if (!rd)
		fail_msg("%s", err);
	while (ktrace_reader_next(rd, &rec, &len) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;

		assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
		view_record(v, &p, rec, len);
	}
	ktrace_reader_close(rd);
	v->rec.blob = NULL; /* pointed into the reader's buffer */
}

/* The launch_seq and kernel_id of launch k (from 0, in launch order) of the
 * kernel `name`. */
static void nth_launch(const struct trace_view *v, const char *name, unsigned k, uint64_t *seq, uint64_t *kid)
{
	uint64_t best = UINT64_MAX;

	*kid = UINT64_MAX;
	for (unsigned i = 0; i < v->kernels; i++)
		if (!strcmp(v->kernel_name[i], name))
			*kid = v->kernel_id[i];
	assert_int_not_equal(*kid, UINT64_MAX);
	for (unsigned round = 0; round <= k; round++) {
		uint64_t next = UINT64_MAX;

		for (unsigned i = 0; i < v->launches && i < MAX_VIEW; i++)
			if (v->kernel[i] == *kid && (round == 0 || v->seq[i] > best) && v->seq[i] < next)
				next = v->seq[i];
		best = next;
	}
	assert_int_not_equal(best, UINT64_MAX);
	*seq = best;
}

static void expect_same_output(const char *mode, const char *const *env, const struct run_out *traced)
{
	struct run_out *plain = malloc(sizeof(*plain));

	run_app(mode, 0, env, plain);
	assert_int_equal(plain->status, 0);
	assert_string_equal(traced->out, plain->out);
	free(plain);
}

static void test_confirmed(void **state)
{
	const char *env[] = { "KTRACE_REPLAY=kernel=fake_nondet_sum,occurrence=2,runs=6", NULL };
	struct run_out *r = malloc(sizeof(*r));
	struct trace_view v;
	uint64_t seq, kid;

	(void)state;
	run_app("nondet", 1, env, r);
	assert_int_equal(r->status, 0);
	if (!strstr(r->err, "replay: Kernel fake_nondet_sum, occurrence 2: confirmed non-deterministic: "))
		fail_msg("stderr: %s", r->err);
	assert_non_null(strstr(r->err, "(the program's launch and 6 replays)"));
	read_trace(&v);
	assert_int_equal(v.replays, 1);
	assert_int_equal(v.replay_notes, 1);
	nth_launch(&v, "fake_nondet_sum", 2, &seq, &kid);
	assert_int_equal(v.rec.launch_seq, seq);
	assert_int_equal(v.rec.kernel_id, kid);
	assert_int_equal(v.report.outcome, KTRACE_REPLAY_CONFIRMED);
	assert_int_equal(v.report.runs_done, 6);
	assert_true(v.report.distinct >= 2);
	assert_int_equal(v.report.occurrence, 2);
	assert_string_equal(v.report.kernel, "fake_nondet_sum");
	/* out (4 bytes) and in (64 floats): whole allocations, in parameter order */
	assert_int_equal(v.report.nbuffers, 2);
	assert_int_equal(v.report.buffers[0].size, 4);
	assert_int_equal(v.report.buffers[0].arg_index, 0);
	assert_true(v.report.buffers[0].replays_differing > 0);
	assert_int_equal(v.report.buffers[1].size, 64 * 4);
	assert_int_equal(v.report.buffers[1].replays_differing, 0);
	assert_string_equal(v.report.buffers[1].name, "arg1");
	ktrace_replay_report_free(&v.report);
	/* the last nondet launch: every output the program printed is a plain run's */
	expect_same_output("nondet", NULL, r);
	free(r);
}

static void test_not_reproduced(void **state)
{
	const char *env[] = { "KTRACE_REPLAY=kernel=fake_add_one,occurrence=1", NULL };
	struct run_out *r = malloc(sizeof(*r));
	struct trace_view v;
	uint64_t seq, kid;

	(void)state;
	run_app("same", 1, env, r);
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->err, "replay: Kernel fake_add_one, occurrence 1: not reproduced: 8 replays"));
	read_trace(&v);
	assert_int_equal(v.replays, 1);
	nth_launch(&v, "fake_add_one", 1, &seq, &kid);
	assert_int_equal(v.rec.launch_seq, seq);
	assert_int_equal(v.report.outcome, KTRACE_REPLAY_NOT_REPRODUCED);
	assert_int_equal(v.report.distinct, 1);
	assert_int_equal(v.report.nbuffers, 1);
	ktrace_replay_report_free(&v.report);
	expect_same_output("same", NULL, r);
	free(r);
}

/* A mangled name: argument types from it, buffers compared as fp32. */
static void test_types_and_hash_off(void **state)
{
	const char *env[] = { "KTRACE_REPLAY=kernel=_Z13fake_kernel_bPfS_i,occurrence=0", "KTRACE_HASH=0", NULL };
	struct run_out *r = malloc(sizeof(*r));
	struct trace_view v;
	uint64_t seq, kid;

	(void)state;
	run_app("typed", 1, env, r);
	assert_int_equal(r->status, 0);
	read_trace(&v);
	assert_int_equal(v.replays, 1);
	nth_launch(&v, "_Z13fake_kernel_bPfS_i", 0, &seq, &kid);
	assert_int_equal(v.rec.launch_seq, seq);
	assert_int_equal(v.report.outcome, KTRACE_REPLAY_NOT_REPRODUCED);
	assert_int_equal(v.report.nbuffers, 2);
	assert_string_equal(v.report.buffers[0].type, "float*");
	assert_int_equal(v.report.buffers[0].elem, KTRACE_ELEM_F32);
	assert_string_equal(v.report.buffers[1].name, "arg1");
	ktrace_replay_report_free(&v.report);
	expect_same_output("typed", NULL, r);
	free(r);
}

/* Copies beyond the budgets: not replayable, the program's launch still made once. */
static void test_not_replayable(void **state)
{
	const char *env[] = { "KTRACE_REPLAY=kernel=fake_add_one,occurrence=0,budget=1,host_budget=1", NULL };
	struct run_out *r = malloc(sizeof(*r));
	struct trace_view v;

	(void)state;
	run_app("same", 1, env, r);
	assert_int_equal(r->status, 0);
	read_trace(&v);
	assert_int_equal(v.replays, 1);
	assert_int_equal(v.report.outcome, KTRACE_REPLAY_NOT_REPLAYABLE);
	assert_int_equal(v.report.reason, KTRACE_REPLAY_OUT_OF_MEMORY);
	ktrace_replay_report_free(&v.report);
	assert_non_null(strstr(r->err, "not replayable (out of memory within the budgets)"));
	expect_same_output("same", NULL, r);
	free(r);
}

/* Another thread launches all along: it waits while the candidate is
 * confirmed, and every launch is recorded. */
static void test_threads(void **state)
{
	const char *env[] = { "KTRACE_REPLAY=kernel=fake_nondet_sum,occurrence=1", NULL };
	struct run_out *r = malloc(sizeof(*r));
	struct trace_view v;

	(void)state;
	alarm(60);
	run_app("threads", 1, env, r);
	alarm(0);
	assert_int_equal(r->status, 0);
	read_trace(&v);
	assert_int_equal(v.replays, 1);
	assert_int_equal(v.launches, 9 + 200);
	assert_int_equal(v.report.outcome, KTRACE_REPLAY_CONFIRMED);
	ktrace_replay_report_free(&v.report);
	free(r);
}

static void test_unreached_and_bad(void **state)
{
	const char *never[] = { "KTRACE_REPLAY=kernel=fake_nondet_sum,occurrence=99", NULL };
	const char *bad[] = { "KTRACE_REPLAY=occurrence=1", NULL };
	struct run_out *r = malloc(sizeof(*r));
	struct trace_view v;

	(void)state;
	run_app("nondet", 1, never, r);
	assert_int_equal(r->status, 0);
	read_trace(&v);
	assert_int_equal(v.replays, 0);
	assert_int_equal(v.launches, 9);
	assert_null(strstr(r->err, "replay:"));
	expect_same_output("nondet", NULL, r);

	run_app("nondet", 1, bad, r);
	assert_int_equal(r->status, 0);
	assert_int_not_equal(access(trace_path, F_OK), 0);
	if (!strstr(r->err, "KTRACE_REPLAY=\"occurrence=1\": value 'occurrence=1': no kernel=NAME") ||
	    !strstr(r->err, "tracing is off") || strchr(r->err, '\n') != r->err + strlen(r->err) - 1)
		fail_msg("stderr: %s", r->err);
	expect_same_output("nondet", NULL, r);
	free(r);
}

/* KTRACE_REPLAY's rank=N, against the rank each launcher's variables give. */
static void test_rank_selection(void **state)
{
	static const struct {
		const char *rank_var; /* NULL: no rank */
		int replays;
	} cases[] = {
		{ "RANK=1", 1 }, { "RANK=0", 0 }, { "OMPI_COMM_WORLD_RANK=1", 1 }, { "PMI_RANK=2", 0 },
		{ "SLURM_PROCID=1", 1 }, { NULL, 0 },
	};
	struct run_out *r = malloc(sizeof(*r));
	struct trace_view v;

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *env[] = { "KTRACE_REPLAY=kernel=fake_nondet_sum,occurrence=2,runs=3,rank=1", cases[i].rank_var,
				      NULL };

		run_app("nondet", 1, env, r);
		assert_int_equal(r->status, 0);
		read_trace(&v);
		if (v.replays != (unsigned)cases[i].replays)
			fail_msg("%s: %u REPLAY records; stderr: %s", cases[i].rank_var ? cases[i].rank_var : "no rank",
				 v.replays, r->err);
		if (v.replays)
			ktrace_replay_report_free(&v.report);
		assert_int_equal(v.launches, 9); /* traced either way */
		assert_int_equal(strstr(r->err, "replay:") != NULL, cases[i].replays);
	}
	expect_same_output("nondet", NULL, r);
	free(r);
}

static int setup(void **state)
{
	const char *b = getenv("BUILD"), *t = getenv("TMPDIR");
	char cwd[PATH_MAX - 64];

	(void)state;
	if (!b || !*b)
		b = "build";
	if (b[0] == '/')
		snprintf(build_dir, sizeof(build_dir), "%s", b);
	else if (getcwd(cwd, sizeof(cwd)))
		snprintf(build_dir, sizeof(build_dir), "%s/%s", cwd, b);
	else
		return -1;
	snprintf(tmp_dir, sizeof(tmp_dir), "%s/ktrace-replay-test.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmp_dir))
		return -1;
	snprintf(trace_path, sizeof(trace_path), "%s/t.ktrace", tmp_dir);
	unsetenv("KTRACE_REPLAY");
	unsetenv("KTRACE_HASH");
	unsetenv("FAKECUDA_NONDET_SEED");
	unsetenv("FAKECUDA_NONDET_FIXED");
	unsetenv("RANK");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("PMI_RANK");
	unsetenv("SLURM_PROCID");
#if defined(__SANITIZE_ADDRESS__)
	/* the sanitized library preloaded into the (sanitized) application */
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0", 1);
#endif
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 32];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_confirmed),
		cmocka_unit_test(test_not_reproduced),
		cmocka_unit_test(test_types_and_hash_off),
		cmocka_unit_test(test_not_replayable),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_unreached_and_bad),
		cmocka_unit_test(test_rank_selection),
	};
	return cmocka_run_group_tests_name("replay_launch", tests, setup, teardown);
}
