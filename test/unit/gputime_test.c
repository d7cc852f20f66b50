/* test/unit/gputime_test.c: GPU times of sampled launches end to end on the CPU.
 *
 * build/gputime_app (test/unit/gputime_app.c) runs under LD_PRELOAD=libktrace.so
 * with the fake driver's real-memory build, whose events keep the host clock
 * of their record as their time (test/fakecuda/fakecuda.c), and its traces
 * must say:
 *  - KTRACE_GPU_TIMES=1: launches that ran on an ordinary stream have a
 *    GPUTIME record of their op_seq, stream and context, with start <= end,
 *    inside the run (after the trace's start and the launch's call, before
 *    the END record), its reference's error bound small (all of them but on
 *    a loaded machine, where the poller may make the events late);
 *    launches that failed, or were made on a stream the driver says is
 *    capturing, have none (and return what the driver returned); a graph
 *    launch has one, flagged graph, at its first node's op_seq; every
 *    sampled launch is either written or counted lost;
 *  - the default rate samples the launches the hash says (one in 64), and
 *    KTRACE_GPU_TIMES=0 none, creating no event;
 *  - a destroyed context takes every event ktrace made in it along;
 *  - a forked child, traced (KTRACE_FOLLOW_FORK=1), measures its own
 *    launches with its own events;
 *  - ktrace-export places the measured launches at their times (checked by
 *    the independent checker, test/tools/check_trace_events.py).
 */
#include <dirent.h>
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

#include <cuda.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "test/reliability/rel_util.h"

#define MAX_RECS 8192
#define CAPTURING_STREAM 0xcaull

static char root_dir[PATH_MAX];
static struct rel_run app_run; /* the last run of gputime_app */

/* Run gputime_app MODE N into trace NAME with KTRACE_GPU_TIMES=rate (NULL:
 * the default) and one more setting (or NULL); returns its stdout, which must
 * end with "OK". */
static char *run_app(const char *mode, int n, const char *name, const char *rate, const char *extra)
{
	char app[PATH_MAX + 32], libpath[PATH_MAX + 32], output[PATH_MAX + 64], ratev[64], nv[16];
	const char *envp[] = { ratev, "KTRACE_QUIET=1", "KTRACE_OVERWRITE=1", extra ? extra : "KTRACE_DEBUG=0", NULL };
	const char *argv[] = { mode, nv, NULL };

	snprintf(app, sizeof app, "%s/gputime_app", rel_build);
	snprintf(libpath, sizeof libpath, "%s/fakecuda-real", rel_build);
	snprintf(output, sizeof output, "%s/%s", rel_tmp, name);
	snprintf(ratev, sizeof ratev, rate ? "KTRACE_GPU_TIMES=%s" : "KTRACE_QUIET=1", rate);
	snprintf(nv, sizeof nv, "%d", n);
	memset(&app_run, 0, sizeof app_run);
	app_run.prog = app;
	app_run.argv = argv;
	app_run.env = envp;
	app_run.preload = 1;
	app_run.libpath = libpath;
	app_run.output = output;
	app_run.keep_fd = -1;
	rel_exec(&app_run);
	if (!WIFEXITED(app_run.status) || WEXITSTATUS(app_run.status) != 0 || !strstr(app_run.out, "OK\n"))
		fail_msg("gputime_app %s: status %d, output:\n%s\nstderr:\n%s", mode, app_run.status, app_run.out,
			 app_run.err);
	return app_run.out;
}

/* ---- what a trace holds ------------------------------------------------------------------ */

struct trace {
	uint64_t start_ns, end_ns;         /* the header's start, the END record's time */
	struct ktrace_rec_launch launch[MAX_RECS];
	uint64_t launch_time[MAX_RECS];
	size_t nlaunch;
	struct ktrace_rec_gputime gt[MAX_RECS];
	size_t ngt;
	uint64_t counters[32];
	uint8_t *keep[MAX_RECS];           /* the launch records (their views point into them) */
};

static struct trace T;

static void take_counters(const void *rec, size_t len)
{
	struct ktrace_rec_counters c;

	assert_int_equal(ktrace_decode_counters(rec, len, &c), 0);
	for (uint32_t i = 0; i < c.ncounters; i++) {
		struct ktrace_counter v;
		ktrace_counters_get(&c, i, &v);
		if (v.id < 32)
			T.counters[v.id] = v.value;
	}
}

static void take(const void *rec, size_t len)
{
	struct ktrace_record_prefix p;
	struct ktrace_rec_header h;

	assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
	if (p.type == KTRACE_REC_HEADER && !ktrace_decode_header(rec, len, &h))
		T.start_ns = h.start_monotonic_ns;
	else if (p.type == KTRACE_REC_END)
		T.end_ns = p.time_ns;
	else if (p.type == KTRACE_REC_COUNTERS)
		take_counters(rec, len);
	else if (p.type == KTRACE_REC_GPUTIME && T.ngt < MAX_RECS)
		assert_int_equal(ktrace_decode_gputime(rec, len, &T.gt[T.ngt++]), 0);
	if (p.type != KTRACE_REC_LAUNCH || T.nlaunch >= MAX_RECS)
		return;
	T.keep[T.nlaunch] = malloc(len);
	memcpy(T.keep[T.nlaunch], rec, len);
	assert_int_equal(ktrace_decode_launch(T.keep[T.nlaunch], len, &T.launch[T.nlaunch]), 0);
	T.launch_time[T.nlaunch++] = p.time_ns;
}

static void read_trace(const char *name)
{
	char path[PATH_MAX + 64], err[512];
	struct ktrace_reader *r;
	const void *rec;
	size_t len;

	for (size_t i = 0; i < T.nlaunch; i++)
		free(T.keep[i]);
	memset(&T, 0, sizeof T);
	snprintf(path, sizeof path, "%s/%s", rel_tmp, name);
	if (!(r = ktrace_reader_open(path, err, sizeof err)))
		fail_msg("%s", err);
	while (ktrace_reader_next(r, &rec, &len) == KTRACE_READ_RECORD)
		take(rec, len);
	ktrace_reader_close(r);
	assert_true(T.end_ns > 0);
}

/* The app's first launch (its pool may not be made yet when it comes). */
static int warm_up(const struct ktrace_rec_launch *l)
{
	for (size_t i = 0; i < T.nlaunch; i++)
		if (T.launch[i].launch_seq < l->launch_seq)
			return 0;
	return 1;
}

static const struct ktrace_rec_gputime *gputime_of(uint64_t op_seq)
{
	for (size_t i = 0; i < T.ngt; i++)
		if (T.gt[i].op_seq == op_seq)
			return &T.gt[i];
	return NULL;
}

/* Launch i's GPUTIME record, if it has one, is a measurement of it: its
 * stream and context, start <= end, inside the run and after the call.
 * Returns whether it has one.  (A sampled launch may have none when the
 * poller thread had not made the context's events or reference yet: a
 * loaded machine; such launches are counted lost.) */
static int check_measured(size_t i)
{
	const struct ktrace_rec_launch *l = &T.launch[i];
	const struct ktrace_rec_gputime *g = gputime_of(l->launch_seq);

	if (!g)
		return 0;
	assert_int_equal(g->flags, 0);
	assert_int_equal(g->stream, l->stream);
	assert_int_equal(g->context, l->context);
	assert_int_equal(g->device, l->device);
	assert_int_equal(g->tid, l->tid);
	assert_true(g->start_ns <= g->end_ns);
	assert_true(g->start_ns >= T.start_ns && g->end_ns <= T.end_ns);
	/* the start event was recorded after the call began (the fake's events
	 * take the host clock); the reference bounds the alignment */
	assert_true(g->start_ns + g->ref_err_ns + 5000 >= T.launch_time[i]);
	assert_true(g->ref_ns >= T.start_ns && g->ref_ns <= g->start_ns + g->ref_err_ns);
	assert_true(g->ref_err_ns < 50u * 1000 * 1000);
	return 1;
}

/* Is launch seq sampled at one in `every` (interpose/capture/gpu_times.h's hash)? */
static int sampled(uint64_t seq, uint64_t every)
{
	return (seq * 0x9e3779b97f4a7c15ull) << 4 < UINT64_MAX / every;
}

/* ---- the cases ------------------------------------------------------------------------------ */

static void test_every_launch(void **state)
{
	size_t plain = 0, measured = 0, capturing = 0, failed = 0;

	(void)state;
	run_app("launches", 40, "every.ktrace", "1", NULL);
	read_trace("every.ktrace");
	for (size_t i = 0; i < T.nlaunch; i++) {
		const struct ktrace_rec_launch *l = &T.launch[i];

		if (warm_up(l))
			continue;
		if (l->result) {
			assert_int_equal(l->result, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
			assert_null(gputime_of(l->launch_seq));
			failed++;
		} else if (l->stream == CAPTURING_STREAM) {
			assert_null(gputime_of(l->launch_seq));
			capturing++;
		} else {
			measured += (size_t)check_measured(i);
			plain++;
		}
	}
	assert_int_equal(plain, 40);
	assert_true(measured >= plain / 2); /* all but on a loaded machine */
	assert_int_equal(failed, 3);
	assert_int_equal(capturing, 40);
	assert_int_equal(T.counters[KTRACE_CTR_GPU_TIMES], T.ngt);
	/* every launch was sampled: each is written or counted lost */
	assert_int_equal(T.counters[KTRACE_CTR_GPU_TIMES] + T.counters[KTRACE_CTR_GPU_TIMES_LOST], T.nlaunch);
}

static void test_default_rate(void **state)
{
	size_t want = 0;

	(void)state;
	run_app("launches", 600, "default.ktrace", NULL, NULL);
	read_trace("default.ktrace");
	for (size_t i = 0; i < T.nlaunch; i++) {
		uint64_t seq = T.launch[i].launch_seq;

		if (sampled(seq, 64))
			want++;
		if (gputime_of(seq)) {
			assert_true(sampled(seq, 64));
			assert_true(check_measured(i));
		}
	}
	assert_true(want >= 10 && want <= 40); /* about 1243 / 64 */
	assert_true(T.ngt > 0);
	assert_int_equal(T.counters[KTRACE_CTR_GPU_TIMES] + T.counters[KTRACE_CTR_GPU_TIMES_LOST], want);
}

static void test_off(void **state)
{
	(void)state;
	/* ktrace makes no event at all (the app makes none either) */
	assert_non_null(strstr(run_app("destroy", 20, "off.ktrace", "0", NULL), "events_live 0\n"));
	read_trace("off.ktrace");
	assert_int_equal(T.ngt, 0);
	assert_int_equal(T.counters[KTRACE_CTR_GPU_TIMES_LOST], 0);
}

static void test_graph_launch(void **state)
{
	size_t graph_launches = 0, measured = 0;

	(void)state;
	run_app("graph", 6, "graph.ktrace", "1", NULL);
	read_trace("graph.ktrace");
	for (size_t i = 0; i < T.nlaunch; i++) {
		const struct ktrace_rec_launch *l = &T.launch[i];
		const struct ktrace_rec_gputime *g;

		if (!(l->flags & KTRACE_LAUNCHF_GRAPH)) {
			check_measured(i);
			continue;
		}
		if (l->graph.node != 0 && l->launch_seq != l->graph.launch_seq)
			assert_null(gputime_of(l->launch_seq));
		if (l->launch_seq != l->graph.launch_seq)
			continue;
		graph_launches++;
		if (!(g = gputime_of(l->launch_seq)))
			continue;
		measured++;
		assert_int_equal(g->flags, KTRACE_GPUTIMEF_GRAPH);
		assert_int_equal(g->stream, l->stream);
		assert_true(g->start_ns <= g->end_ns && g->start_ns >= T.start_ns && g->end_ns <= T.end_ns);
	}
	assert_int_equal(graph_launches, 6);
	assert_true(measured >= 3);
	assert_int_equal(T.counters[KTRACE_CTR_GPU_TIMES] + T.counters[KTRACE_CTR_GPU_TIMES_LOST], 1 + graph_launches);
}

static void test_context_destroyed(void **state)
{
	(void)state;
	/* the app prints the events the fake driver holds after cuCtxDestroy */
	assert_non_null(strstr(run_app("destroy", 30, "destroy.ktrace", "1", NULL), "events_live 0\n"));
	read_trace("destroy.ktrace");
	assert_true(T.ngt >= 15);
	assert_int_equal(T.counters[KTRACE_CTR_GPU_TIMES] + T.counters[KTRACE_CTR_GPU_TIMES_LOST], T.nlaunch);
}

static void test_fork(void **state)
{
	char child[PATH_MAX + 64];
	size_t n = 0;

	(void)state;
	run_app("fork", 20, "fork.ktrace", "1", "KTRACE_FOLLOW_FORK=1");
	read_trace("fork.ktrace");
	for (size_t i = 0; i < T.nlaunch; i++)
		n += (size_t)check_measured(i);
	assert_int_equal(T.nlaunch, 41);
	assert_true(n >= 20);
	/* the child's trace (KTRACE_OUTPUT without %p: .<pid> added) */
	DIR *d = opendir(rel_tmp);
	struct dirent *e;
	assert_non_null(d);
	child[0] = '\0';
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "fork.ktrace.", 12))
			snprintf(child, sizeof child, "%s", e->d_name);
	closedir(d);
	assert_true(child[0] != '\0');
	read_trace(child);
	assert_int_equal(T.nlaunch, 20);
	assert_true(T.ngt > 0); /* its own pool: the first launches may come before it */
	for (size_t i = 0; i < T.nlaunch; i++)
		check_measured(i);
}

static void test_export_places_them(void **state)
{
	char cmd[6 * PATH_MAX];

	(void)state;
	run_app("launches", 40, "export.ktrace", "2", NULL);
	snprintf(cmd, sizeof cmd,
		 "cd %s && %s/ktrace-export -q export.ktrace -o export.json && %s/ktrace-dump --json export.ktrace "
		 ">export.jsonl && python3 %s/test/tools/check_trace_events.py --dump export.jsonl export.json "
		 ">check.out 2>&1 && grep -q 'measured GPU slices at their measured times' check.out",
		 rel_tmp, rel_build, rel_build, root_dir);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof cmd, "cat %s/check.out", rel_tmp);
		if (system(cmd)) {
		}
		fail_msg("the timeline of a trace with GPU times does not pass the checker");
	}
}

static int setup(void **state)
{
	(void)state;
	if (!getcwd(root_dir, sizeof root_dir))
		return -1;
	return rel_init("gputime");
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < T.nlaunch; i++)
		free(T.keep[i]);
	rel_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_launch),
		cmocka_unit_test(test_default_rate),
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_graph_launch),
		cmocka_unit_test(test_context_destroyed),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_export_places_them),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
