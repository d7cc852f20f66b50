/* test/unit/diff_order_test.c: stream order in ktrace-diff, on constructed
 * trace pairs (cmocka).
 *
 * diff_sim.c writes a scenario instead of training steps: scale() launches A
 * (stream 1) and B write overlapping slices of a workspace, then reduce_sum()
 * reads all of it after host syncs of both streams.  What orders B after A
 * varies: nothing (the cuDNN FFT case: concurrent writers, identical final
 * result), an event, the legacy stream, a host sync of each kind, a
 * non-blocking stream the legacy stream does not order, an unknown order.
 * Each case checks which digests are evidence (set aside or not), whether a
 * real divergence is found, and the possible races reported; text and JSON
 * output against test/golden/diff/order_*.  KTRACE_UPDATE_GOLDEN=1 rewrites
 * the golden files (review the diff).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/scratch.h"
#include "test/unit/diff_sim.h"
#include "format/ktrace_format.h"
#include "tools/diff/diff_internal.h"
#include "tools/diff/diff_order.h"

static char tmpdir[400];

struct pair {
	struct tm_trace a, b;
	struct diff_result r;
	struct diff_opts o;
};

static void write_run(const char *name, const struct sim_opts *o, uint16_t minor, char *path, size_t cap)
{
	char err[512];
	snprintf(path, cap, "%s/%s", tmpdir, name);
	if (sim_write(path, o, err, sizeof err) != 0)
		fail_msg("sim_write: %s", err);
	if (minor) { /* an older writer's preamble: format 1.<minor> */
		uint8_t v[2] = { (uint8_t)minor, (uint8_t)(minor >> 8) };
		int fd = open(path, O_WRONLY);
		assert_true(fd >= 0);
		assert_int_equal(pwrite(fd, v, 2, 10), 2);
		close(fd);
	}
}

static void compare_minor(struct pair *p, const struct sim_opts *oa, const struct sim_opts *ob, int strict,
			  uint16_t minor)
{
	char pa[512], pb[512], err[512];
	write_run("a.ktrace", oa, minor, pa, sizeof pa);
	write_run("b.ktrace", ob, minor, pb, sizeof pb);
	memset(p, 0, sizeof *p);
	if (ktrace_tm_load(&p->a, pa, 0, err, sizeof err))
		fail_msg("load A: %s", err);
	if (ktrace_tm_load(&p->b, pb, 0, err, sizeof err))
		fail_msg("load B: %s", err);
	p->o.strict = strict;
	p->o.label_a = "a.ktrace";
	p->o.label_b = "b.ktrace";
	if (ktrace_diff_compare(&p->a, &p->b, &p->o, &p->r, err, sizeof err))
		fail_msg("compare: %s", err);
}

static void compare(struct pair *p, const struct sim_opts *oa, const struct sim_opts *ob, int strict)
{
	compare_minor(p, oa, ob, strict, 0);
}

static void release(struct pair *p)
{
	ktrace_diff_result_free(&p->r);
	ktrace_tm_free(&p->a);
	ktrace_tm_free(&p->b);
}

static char *render(const struct pair *p, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	if (json) {
		ktrace_diff_report_json(m, &p->r, &p->o);
		fputc('\n', m);
	} else {
		ktrace_diff_report_text(m, &p->r, &p->o);
	}
	fclose(m);
	return buf;
}

/* Compare the text and JSON reports with test/golden/diff/<name>.txt / .json,
 * or rewrite them when asked. */
static void golden(const char *name, const struct pair *p)
{
	for (int json = 0; json < 2; json++) {
		char path[512];
		char *got = render(p, json);
		snprintf(path, sizeof path, "test/golden/diff/%s.%s", name, json ? "json" : "txt");
		const char *upd = getenv("KTRACE_UPDATE_GOLDEN");
		if (upd && *upd && strcmp(upd, "0")) {
			FILE *f = fopen(path, "w");
			assert_non_null(f);
			fputs(got, f);
			fclose(f);
			free(got);
			continue;
		}
		FILE *f = fopen(path, "rb");
		if (!f)
			fail_msg("%s: missing golden file (run with KTRACE_UPDATE_GOLDEN=1 and review it)", path);
		char want[65536];
		size_t n = fread(want, 1, sizeof want - 1, f);
		want[n] = '\0';
		fclose(f);
		if (strcmp(want, got) != 0) {
			fprintf(stderr, "--- %s differs; got:\n%s\n", path, got);
			free(got);
			fail_msg("%s: output differs from the golden file", path);
		}
		free(got);
	}
}

/* The CI reports (JUnit, Markdown, GitHub annotations) compared with
 * test/golden/diff/<name>.junit.xml / .md / .github, or rewritten when asked:
 * they carry the digests set aside and the possible races as the text does. */
static void golden_ci(const char *name, const struct pair *p)
{
	static const char *const ext[3] = { "junit.xml", "md", "github" };
	const struct diff_result *rs[1] = { &p->r };
	char path[512], out[512], err[512];

	for (int k = 0; k < 3; k++) {
		snprintf(out, sizeof out, "%s/report.%s", tmpdir, ext[k]);
		unlink(out);
		if (k == 0)
			assert_int_equal(ktrace_diff_report_junit(out, rs, 1, err, sizeof err), 0);
		else if (k == 1)
			assert_int_equal(ktrace_diff_report_markdown(out, rs, 1, err, sizeof err), 0);
		else {
			FILE *f = fopen(out, "w");
			assert_non_null(f);
			ktrace_diff_report_github(f, &p->r, &p->o);
			fclose(f);
		}
		snprintf(path, sizeof path, "test/golden/diff/%s.%s", name, ext[k]);
		char cmd[4096];
		const char *upd = getenv("KTRACE_UPDATE_GOLDEN");
		if (upd && *upd && strcmp(upd, "0"))
			snprintf(cmd, sizeof cmd, "cp '%s' '%s'", out, path);
		else
			snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s' || { echo '--- %s differs:'; diff -u '%s' '%s'; exit 1; }",
				 path, out, path, path, out);
		if (system(cmd) != 0)
			fail_msg("%s: output differs from the golden file", path);
	}
}

/* The two runs of a scenario; the workspace writers see each other's writes
 * differently in B when `interleave` (nothing orders them then). */
static void scenario(struct sim_opts *oa, struct sim_opts *ob, int order_case, int interleave)
{
	sim_defaults(oa, 0);
	sim_defaults(ob, 1);
	oa->order_case = ob->order_case = order_case;
	if (interleave) {
		oa->order_interleave = 0x11;
		ob->order_interleave = 0x22;
	}
}

static const struct tm_launch *launch_at(const struct tm_trace *t, size_t i)
{
	assert_true(i < t->nlaunches);
	return &t->launches[i];
}

/* A real divergence was found at launch A (scale, launch 1), its inputs identical. */
static void expect_divergence_at_a(const struct pair *p)
{
	assert_int_equal(p->r.status, 1);
	assert_true(p->r.ndivs >= 1);
	assert_ptr_equal(p->r.divs[0].la, launch_at(&p->a, 0));
	assert_int_equal(p->r.divs[0].cls, DIFF_CLASS_KERNEL_NONDET);
	assert_int_equal(p->r.divs[0].nunverified, 0);
}

/* Nothing was found: A and B unverified (their digests set aside), C compared. */
static void expect_set_aside(const struct pair *p)
{
	assert_int_equal(p->r.status, 0);
	assert_int_equal(p->r.ndivs, 0);
	assert_int_equal(p->r.matched, 3);
	assert_int_equal(p->r.unverified, 2);
	assert_true(p->r.set_aside >= 2);
}

/* ---- the cases ----------------------------------------------------------------------- */

/* The cuDNN FFT case: two streams write overlapping workspace slices at the
 * same time, the final result is the same: no divergence (before stream
 * order, the writers' digests made one); a possible race, as a note. */
static void test_concurrent_writers_identical_result(void **state)
{
	struct sim_opts oa, ob;
	struct pair p;
	(void)state;
	scenario(&oa, &ob, SIM_ORDER_CONCURRENT, 1);
	compare(&p, &oa, &ob, 0);
	expect_set_aside(&p);
	assert_true(p.r.order_a && p.r.order_b);
	assert_int_equal(p.r.races_a, 1);
	assert_int_equal(p.r.races_b, 1);
	assert_int_equal(p.r.nraces, 1);
	assert_int_equal(p.r.races[0].run, 'A');
	assert_true(p.r.races[0].in_both);
	assert_ptr_equal(p.r.races[0].first, launch_at(&p.a, 0));
	assert_ptr_equal(p.r.races[0].second, launch_at(&p.a, 1));
	assert_true(p.r.races[0].lo == oa.addr_base + 0x70800 && p.r.races[0].hi == oa.addr_base + 0x71800);
	assert_string_equal(p.r.races[0].arg_first, "out");
	assert_int_equal(p.r.nwarnings, 0);
	golden("order_concurrent", &p);
	golden_ci("order_concurrent", &p);
	release(&p);
	/* --strict: the race counts */
	compare(&p, &oa, &ob, 1);
	assert_int_equal(p.r.status, 1);
	release(&p);
	/* the same launches without ORDER records: as before, the digests of A are evidence */
	oa.order_no_records = ob.order_no_records = 1;
	compare(&p, &oa, &ob, 0);
	assert_false(p.r.order_a || p.r.order_b);
	assert_int_equal(p.r.set_aside, 0);
	assert_int_equal(p.r.status, 1);
	assert_ptr_equal(p.r.divs[0].la, launch_at(&p.a, 0));
	assert_int_equal(p.r.nwarnings, 0); /* format 1.2 traces: nothing to say */
	release(&p);
}

/* Ordered by an event: the digests are evidence again and A's real divergence
 * is found; concurrent, the same divergence is set aside. */
static void test_event_order_makes_digests_evidence(void **state)
{
	struct sim_opts oa, ob;
	struct pair p;
	(void)state;
	scenario(&oa, &ob, SIM_ORDER_EVENT, 0);
	ob.order_diverge = 1;
	compare(&p, &oa, &ob, 0);
	expect_divergence_at_a(&p);
	assert_int_equal(p.r.set_aside, 0);
	assert_int_equal(p.r.races_a + p.r.races_b, 0);
	golden("order_event", &p);
	release(&p);
	scenario(&oa, &ob, SIM_ORDER_CONCURRENT, 0);
	ob.order_diverge = 1;
	compare(&p, &oa, &ob, 0);
	expect_set_aside(&p);
	release(&p);
}

/* The legacy stream waits for blocking streams: B on it is ordered after A. */
static void test_legacy_stream_implicit_sync(void **state)
{
	struct sim_opts oa, ob;
	struct pair p;
	(void)state;
	scenario(&oa, &ob, SIM_ORDER_LEGACY, 0);
	ob.order_diverge = 1;
	compare(&p, &oa, &ob, 0);
	expect_divergence_at_a(&p);
	assert_int_equal(p.r.set_aside, 0);
	assert_int_equal(p.r.races_a + p.r.races_b, 0);
	assert_true(launch_at(&p.a, 1)->look->stream == 0);
	release(&p);
}

/* A non-blocking stream is not ordered by the legacy stream. */
static void test_nonblocking_stream_not_ordered_by_legacy(void **state)
{
	struct sim_opts oa, ob;
	struct pair p;
	(void)state;
	scenario(&oa, &ob, SIM_ORDER_LEGACY, 1);
	oa.order_nonblocking = ob.order_nonblocking = 1;
	ob.order_diverge = 1;
	compare(&p, &oa, &ob, 0);
	expect_set_aside(&p);
	assert_int_equal(p.r.races_a, 1);
	assert_true(p.r.races[0].second->look->stream == 0);
	golden("order_nonblocking", &p);
	release(&p);
}

/* Each host synchronisation orders what the host issues after it. */
static void test_host_sync_orders(void **state)
{
	(void)state;
	for (int sync = 0; sync <= 5; sync++) {
		struct sim_opts oa, ob;
		struct pair p;
		scenario(&oa, &ob, SIM_ORDER_HOST_SYNC, 0);
		oa.order_nonblocking = ob.order_nonblocking = 1;
		oa.order_sync = ob.order_sync = sync;
		ob.order_diverge = 1;
		compare(&p, &oa, &ob, 0);
		if (p.r.ndivs == 0)
			fail_msg("host sync %d: A's divergence not found (%" PRIu64 " set aside)", sync, p.r.set_aside);
		expect_divergence_at_a(&p);
		assert_int_equal(p.r.set_aside, 0);
		assert_int_equal(p.r.races_a + p.r.races_b, 0);
		release(&p);
	}
}

/* A real race: the workspace's final content differs between the runs.  The
 * reader's input differs (its last writer named), and the race is reported
 * naming both launches and the bytes they both wrote. */
static void test_real_race_reported(void **state)
{
	struct sim_opts oa, ob;
	struct pair p;
	(void)state;
	scenario(&oa, &ob, SIM_ORDER_CONCURRENT, 1);
	ob.order_final_differs = 1;
	compare(&p, &oa, &ob, 0);
	assert_int_equal(p.r.status, 1);
	assert_int_equal(p.r.ndivs, 1);
	assert_ptr_equal(p.r.divs[0].la, launch_at(&p.a, 2));
	assert_int_equal(p.r.divs[0].cls, DIFF_CLASS_INPUTS_DIFFER);
	assert_int_equal(p.r.divs[0].inputs[0].wa.type, DIFF_WRITER_LAUNCH);
	assert_int_equal(p.r.races_a, 1);
	assert_int_equal(p.r.unverified, 2);
	golden("order_race", &p);
	golden_ci("order_race", &p);
	release(&p);
}

/* The reader runs while B may still write the workspace: its input is set
 * aside, naming B as the concurrent writer, and its divergence cannot be
 * put on its inputs or on the kernel. */
static void test_reader_concurrent_with_writer(void **state)
{
	struct sim_opts oa, ob;
	struct pair p;
	(void)state;
	scenario(&oa, &ob, SIM_ORDER_CONCURRENT, 1);
	oa.order_no_final_sync = ob.order_no_final_sync = 1;
	oa.order_exact = ob.order_exact = 1;
	ob.order_final_differs = 1;
	compare(&p, &oa, &ob, 0);
	assert_int_equal(p.r.status, 1);
	assert_int_equal(p.r.ndivs, 1);
	const struct diff_divergence *d = &p.r.divs[0];
	/* a read/write race in both runs explains it: verdict "race", both sides named */
	assert_int_equal(ktrace_diff_verdict(&p.r), DIFF_VERDICT_RACE);
	assert_int_equal(p.r.rw_races, 1);
	assert_non_null(p.r.race_first);
	assert_ptr_equal(p.r.race_first->reader, launch_at(&p.a, 2));
	assert_ptr_equal(p.r.race_first->reader_b, launch_at(&p.b, 2));
	assert_string_equal(p.r.race_first->arg, "in");
	assert_ptr_equal(p.r.race_first->writer_a.launch, launch_at(&p.a, 1));
	assert_ptr_equal(p.r.race_first->writer_b.launch, launch_at(&p.b, 1));
	assert_int_equal(p.r.race_first->writer_a.stream, 0x5600aaaa0020ull);
	assert_int_equal(p.r.race_first->same_graph, 0);
	assert_ptr_equal(d->la, launch_at(&p.a, 2));
	assert_int_equal(d->cls, DIFF_CLASS_INPUTS_UNVERIFIED);
	assert_int_equal(d->nunverified, 1);
	assert_string_equal(d->unverified[0].name, "in");
	assert_int_equal(d->unverified[0].concurrent.run, 'A');
	assert_ptr_equal(d->unverified[0].concurrent.launch, launch_at(&p.a, 1));
	assert_string_equal(d->unverified[0].concurrent.arg, "out");
	assert_int_equal(p.r.races_a, 1); /* A and B: the reader writes nothing B writes */
	/* had a replay not reproduced it, the evidence names the concurrent writer */
	struct diff_explanation ex[DIFF_EXPLANATIONS_MAX];
	size_t n = ktrace_diff_explain(&p.r, d->la, ex, DIFF_EXPLANATIONS_MAX);
	assert_true(n >= 2);
	assert_string_equal(ex[0].key, "concurrent_writer");
	assert_non_null(strstr(ex[0].text, "'in' may also be written by "));
	assert_non_null(strstr(ex[0].text, " of run A, stream 0x5600aaaa0020), which nothing orders with it"));
	assert_string_equal(ex[n - 1].key, "isolation");
	assert_int_equal(ktrace_diff_explain(&p.r, d->la, ex, 1), 1); /* the replay's limit always fits */
	assert_string_equal(ex[0].key, "isolation");
	golden("order_reader", &p);
	golden_ci("order_reader", &p);
	release(&p);
	/* the reader's own digests changed (the writer wrote while it ran): its
	 * parameter is const, so it still only reads, and the race explains it */
	scenario(&oa, &ob, SIM_ORDER_CONCURRENT, 1);
	oa.order_no_final_sync = ob.order_no_final_sync = 1;
	oa.order_exact = ob.order_exact = 1;
	oa.order_reader_changed = ob.order_reader_changed = 1;
	ob.order_final_differs = 1;
	compare(&p, &oa, &ob, 0);
	assert_int_equal(ktrace_diff_verdict(&p.r), DIFF_VERDICT_RACE);
	assert_non_null(p.r.race_first);
	assert_int_equal(p.r.race_first->writes_too, 0);
	assert_ptr_equal(p.r.race_first->writer_a.launch, launch_at(&p.a, 1));
	release(&p);
	/* inferred extents (a caching allocator's segment): they accuse nobody */
	scenario(&oa, &ob, SIM_ORDER_CONCURRENT, 1);
	oa.order_no_final_sync = ob.order_no_final_sync = 1;
	ob.order_final_differs = 1;
	compare(&p, &oa, &ob, 0);
	assert_int_equal(p.r.rw_races, 0);
	assert_int_equal(ktrace_diff_verdict(&p.r), DIFF_VERDICT_DIGESTS_ONLY);
	release(&p);
}

/* The writers race (their outcome differs in B); the reader waits for an
 * event recorded after the side stream's write; exact extents. */
static void raced_then_event(struct sim_opts *oa, struct sim_opts *ob)
{
	scenario(oa, ob, SIM_ORDER_CONCURRENT, 1);
	oa->order_no_final_sync = ob->order_no_final_sync = 1;
	oa->order_reader_event = ob->order_reader_event = 1;
	oa->order_exact = ob->order_exact = 1;
	ob->order_final_differs = 1;
}

/* The reader's stream waits for an event recorded after the side stream's
 * write: ordered, no race; its input is evidence, and a difference there
 * comes from upstream. */
static void test_reader_ordered_by_event(void **state)
{
	struct sim_opts oa, ob;
	struct pair p;
	(void)state;
	scenario(&oa, &ob, SIM_ORDER_CONCURRENT, 0);
	oa.order_no_final_sync = ob.order_no_final_sync = 1;
	oa.order_reader_event = ob.order_reader_event = 1;
	oa.order_exact = ob.order_exact = 1;
	compare(&p, &oa, &ob, 0);
	assert_int_equal(p.r.rw_races, 0);
	assert_null(p.r.race_first);
	assert_int_equal(p.r.status, 0);
	assert_int_equal(ktrace_diff_verdict(&p.r), DIFF_VERDICT_IDENTICAL);
	release(&p);
	/* the same with the workspace's content differing (the writers raced each other) */
	raced_then_event(&oa, &ob);
	compare(&p, &oa, &ob, 0);
	assert_int_equal(p.r.rw_races, 0);
	assert_int_equal(p.r.ndivs, 1);
	assert_int_equal(p.r.divs[0].cls, DIFF_CLASS_INPUTS_DIFFER);
	assert_int_equal(ktrace_diff_verdict(&p.r), DIFF_VERDICT_DIGESTS_ONLY);
	golden("order_reader_event", &p);
	/* replays in isolation did not reproduce it (`ktrace check`): the writers' race explains it */
	assert_non_null(p.r.race_first_ww);
	assert_ptr_equal(p.r.race_first_ww->first, launch_at(&p.a, 0));
	assert_ptr_equal(p.r.race_first_ww->second, launch_at(&p.a, 1));
	struct diff_confirm replay = { .launch = p.r.divs[0].la, .outcome = KTRACE_REPLAY_NOT_REPRODUCED };
	struct diff_confirmation none = { .replays = 8, .max_runs = 3, .v = &replay, .n = 1, .confirmed = -1 };
	p.r.confirm = &none;
	assert_int_equal(ktrace_diff_verdict(&p.r), DIFF_VERDICT_RACE);
	assert_string_equal(ktrace_diff_verdict_name(DIFF_VERDICT_RACE), "race");
	char line[1400];
	ktrace_diff_race_verdict_line(&p.r, line, sizeof line);
	assert_non_null(strstr(line, "race: replays in isolation did not reproduce the first divergence"));
	/* not replayed (not replayable, or another launch was): nothing says isolation hides it */
	replay.outcome = KTRACE_REPLAY_NOT_REPLAYABLE;
	assert_int_equal(ktrace_diff_verdict(&p.r), DIFF_VERDICT_UNCONFIRMED);
	replay.outcome = KTRACE_REPLAY_NOT_REPRODUCED;
	replay.launch = launch_at(&p.a, 0);
	assert_int_equal(ktrace_diff_verdict(&p.r), DIFF_VERDICT_UNCONFIRMED);
	p.r.confirm = NULL;
	release(&p);
}

/* The writers' race is over before the first divergence reads the
 * workspace: a launch ordered after both rewrites all of it, and the
 * reader's own result differs.  The race does not touch what it read, so
 * even when replays in isolation do not reproduce it the verdict is not
 * "race". */
static void test_ww_race_overwritten_is_not_the_cause(void **state)
{
	struct sim_opts oa, ob;
	struct pair p;
	(void)state;
	raced_then_event(&oa, &ob);
	oa.order_rewrite = ob.order_rewrite = 1;
	ob.order_reader_nondet = 1;
	compare(&p, &oa, &ob, 0);
	assert_int_equal(p.r.races_a, 1);
	assert_true(p.r.races[0].in_both);
	assert_int_equal(p.r.ndivs, 1);
	assert_ptr_equal(p.r.divs[0].la, launch_at(&p.a, 3));
	assert_int_equal(p.r.divs[0].cls, DIFF_CLASS_KERNEL_NONDET);
	assert_null(p.r.race_first);
	assert_null(p.r.race_first_ww);
	struct diff_confirm replay = { .launch = p.r.divs[0].la, .outcome = KTRACE_REPLAY_NOT_REPRODUCED };
	struct diff_confirmation none = { .replays = 8, .max_runs = 3, .v = &replay, .n = 1, .confirmed = -1 };
	p.r.confirm = &none;
	assert_int_equal(ktrace_diff_verdict(&p.r), DIFF_VERDICT_UNCONFIRMED);
	p.r.confirm = NULL;
	release(&p);
	/* without the rewrite the reader reads what the race wrote last: a race touches its input */
	oa.order_rewrite = ob.order_rewrite = 0;
	compare(&p, &oa, &ob, 0);
	assert_ptr_equal(p.r.divs[0].la, launch_at(&p.a, 2));
	assert_non_null(p.r.race_first_ww);
	assert_int_equal(p.r.race_first_ww->region_first, 1);
	assert_int_equal(p.r.race_first_ww->region_second, 1);
	replay.launch = p.r.divs[0].la;
	p.r.confirm = &none;
	assert_int_equal(ktrace_diff_verdict(&p.r), DIFF_VERDICT_RACE);
	p.r.confirm = NULL;
	release(&p);
}

/* An unknown order (a stream memory operation) on B's stream: until a host
 * sync covers it, the event that would order B after A does not count. */
static void test_unknown_order_is_conservative(void **state)
{
	struct sim_opts oa, ob;
	struct pair p;
	(void)state;
	scenario(&oa, &ob, SIM_ORDER_UNKNOWN, 0);
	ob.order_diverge = 1;
	compare(&p, &oa, &ob, 0);
	expect_set_aside(&p);
	release(&p);
}

/* Traces older than 1.2 cannot have stream order: the diff behaves as before
 * and says so once; recorded in one run only, it says that. */
static void test_order_not_recorded(void **state)
{
	struct sim_opts oa, ob;
	struct pair p;
	(void)state;
	scenario(&oa, &ob, SIM_ORDER_CONCURRENT, 1);
	oa.order_no_records = ob.order_no_records = 1;
	compare_minor(&p, &oa, &ob, 0, 1);
	assert_int_equal(p.r.status, 1);
	assert_int_equal(p.r.nwarnings, 1);
	assert_non_null(strstr(p.r.warnings[0], "stream order was not recorded (format 1.1 trace"));
	char *text = render(&p, 0), *json = render(&p, 1);
	assert_null(strstr(text, "stream order:"));
	assert_null(strstr(json, "stream_order"));
	free(text);
	free(json);
	release(&p);
	scenario(&oa, &ob, SIM_ORDER_CONCURRENT, 1);
	ob.order_no_records = 1;
	compare(&p, &oa, &ob, 0);
	assert_true(p.r.order_a && !p.r.order_b);
	assert_int_equal(p.r.nwarnings, 1);
	assert_non_null(strstr(p.r.warnings[0], "stream order was recorded in run A only"));
	assert_int_equal(p.r.races_a, 1);
	assert_int_equal(p.r.races_b, 0);
	release(&p);
}

/* ---- the relation itself, on hand-built traces --------------------------------------- */

/* A run built in memory: launches (each writing one region of 256 bytes at
 * `at`) and ORDER records, both in host order. */
struct hand {
	struct tm_trace t;
	struct tm_kernel k;
	struct tm_launch l[16];
	struct tm_launch_look look[16];
	struct tm_region g[16];
	struct tm_extent e[16];  /* launch i's region's: extent i + 1 */
	struct tm_order o[16];
	struct tm_op op[16];
	uint64_t next_seq;       /* launches, copies and memsets share the numbering */
};

static void hand_launch(struct hand *h, uint64_t stream, uint32_t tid, uint64_t at)
{
	size_t i = h->t.nlaunches++;
	struct tm_launch *l = &h->l[i];
	memset(l, 0, sizeof *l);
	l->seq = h->next_seq++;
	h->look[i] = (struct tm_launch_look){ .kernel = &h->k, .context = 0xc0, .stream = stream, .tid = tid };
	l->look = &h->look[i];
	l->flags = KTRACE_LAUNCHF_HASHED;
	h->look[i].nregions = 1;
	l->regions = &h->g[i];
	h->e[i] = (struct tm_extent){ .ptr = at, .hash_len = 256 };
	h->t.nextents = h->t.nlaunches;
	h->g[i] = (struct tm_region){ .flags = KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST, .extent = (uint32_t)i + 1,
				      .pre_hash = 1, .post_hash = 2 };
}

static void hand_order(struct hand *h, uint32_t op, uint64_t stream, uint64_t event, uint32_t tid)
{
	size_t i = h->t.norders++;
	h->o[i] = (struct tm_order){ h->next_seq, i, op, tid, stream, event, 0xc0, 0, 0, 0, 0 };
}

/* A copy (dir) or, with type TM_OP_MEMSET, a memset of 256 bytes at `at`
 * (device memory; for a copy to the host, its source), on `stream`. */
static void hand_op(struct hand *h, uint32_t type, uint32_t dir, uint32_t flags, int pinned, uint64_t stream,
		    uint64_t at)
{
	struct tm_op *p = &h->op[h->t.nops++];
	memset(p, 0, sizeof *p);
	p->seq = h->next_seq++;
	p->type = type;
	p->dir = dir;
	p->flags = flags;
	p->tid = 1;
	p->dst = dir == KTRACE_COPY_DTOH ? 0x7ff000000000ull : at;
	p->src = dir == KTRACE_COPY_DTOH ? at : 0x7ff000000000ull;
	p->bytes = 256;
	p->stream = stream;
	p->context = 0xc0;
	p->host_pinned = (uint32_t)pinned;
}

static void hand_init(struct hand *h)
{
	memset(h, 0, sizeof *h);
	h->k.name = h->k.demangled = "k";
	h->t.path = "hand";
	h->t.launches = h->l;
	h->t.extents = h->e;
	h->t.orders = h->o;
	h->t.ops = h->op;
	h->t.format_minor = 2;
}

static int writes_all(const struct tm_trace *t, size_t li, uint32_t r, void *ctx)
{
	(void)t, (void)li, (void)r, (void)ctx;
	return DIFF_ORDER_WRITES_YES;
}

/* Does launch a have a concurrent writer of its bytes (launch b's)? */
static int concurrent(const struct hand *h, size_t a)
{
	int oom;
	struct diff_order_writer w;
	struct diff_order *o = ktrace_diff_order_build(&h->t, writes_all, NULL, &oom);
	assert_non_null(o);
	int c = ktrace_diff_order_concurrent_writer(o, a, h->e[a].ptr, 256, &w);
	ktrace_diff_order_free(o);
	return c;
}

/* A destroyed stream's handle reused by a new stream: a new stream, whose
 * work nothing orders with the old one's (destroying does not wait). */
static void test_handle_reused_after_destroy(void **state)
{
	struct hand h;
	(void)state;
	hand_init(&h);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x100, 0, 1);
	hand_launch(&h, 0x100, 1, 0x1000);
	hand_order(&h, KTRACE_ORDER_STREAM_DESTROY, 0x100, 0, 1);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x100, 0, 1);
	hand_launch(&h, 0x100, 1, 0x1000);
	assert_true(concurrent(&h, 1));
	/* without the destroy and create, one stream: ordered */
	hand_init(&h);
	hand_launch(&h, 0x100, 1, 0x1000);
	hand_launch(&h, 0x100, 1, 0x1000);
	hand_order(&h, KTRACE_ORDER_STREAM_SYNC, 0x100, 0, 1);
	assert_false(concurrent(&h, 1));
}

/* A host sync orders only what the syncing thread issues afterwards. */
static void test_host_sync_is_per_thread(void **state)
{
	struct hand h;
	(void)state;
	hand_init(&h);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x100, 0, 1);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x200, 0, 1);
	hand_launch(&h, 0x100, 1, 0x1000);
	hand_order(&h, KTRACE_ORDER_STREAM_SYNC, 0x100, 0, 1);
	hand_launch(&h, 0x200, 2, 0x1000); /* thread 2 knows nothing of thread 1's sync */
	hand_launch(&h, 0x200, 1, 0x1000); /* thread 1 does */
	assert_true(concurrent(&h, 1));
	int oom;
	struct diff_order_writer w;
	struct diff_order *o = ktrace_diff_order_build(&h.t, writes_all, NULL, &oom);
	assert_non_null(o);
	assert_int_equal(ktrace_diff_order_concurrent_writer(o, 2, 0x1000, 256, &w), 0); /* after 0 and 1 */
	assert_int_equal(ktrace_diff_order_concurrent_writer(o, 0, 0x1000, 256, &w), 1); /* with 1 */
	assert_ptr_equal(w.launch, &h.l[1]);
	ktrace_diff_order_free(o);
}

/* A wait uses the event's latest record before it; a wait on an event never
 * recorded orders nothing. */
static void test_event_latest_record(void **state)
{
	struct hand h;
	(void)state;
	hand_init(&h);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x100, 0, 1);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x200, 0, 1);
	hand_order(&h, KTRACE_ORDER_EVENT_RECORD, 0x100, 0xe, 1); /* before launch 0 */
	hand_launch(&h, 0x100, 1, 0x1000);
	hand_order(&h, KTRACE_ORDER_STREAM_WAIT_EVENT, 0x200, 0xe, 1);
	hand_order(&h, KTRACE_ORDER_STREAM_WAIT_EVENT, 0x200, 0xf, 1); /* never recorded */
	hand_launch(&h, 0x200, 1, 0x1000);
	assert_true(concurrent(&h, 1));
	hand_init(&h);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x100, 0, 1);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x200, 0, 1);
	hand_order(&h, KTRACE_ORDER_EVENT_RECORD, 0x100, 0xe, 1);
	hand_launch(&h, 0x100, 1, 0x1000);
	hand_order(&h, KTRACE_ORDER_EVENT_RECORD, 0x100, 0xe, 1); /* recorded again, after launch 0 */
	hand_order(&h, KTRACE_ORDER_STREAM_WAIT_EVENT, 0x200, 0xe, 1);
	hand_launch(&h, 0x200, 1, 0x1000);
	assert_false(concurrent(&h, 1));
}

/* An unknown order stops event ordering on its stream until a host sync
 * covers it; after that, events order the stream again. */
static void test_unknown_order_window_closes(void **state)
{
	struct hand h;
	(void)state;
	hand_init(&h);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x100, 0, 1);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x200, 0, 1);
	hand_order(&h, KTRACE_ORDER_UNKNOWN, 0x200, 0, 1);
	hand_order(&h, KTRACE_ORDER_STREAM_SYNC, 0x200, 0, 1); /* covers the unknown operation */
	hand_launch(&h, 0x100, 1, 0x1000);
	hand_order(&h, KTRACE_ORDER_EVENT_RECORD, 0x100, 0xe, 1);
	hand_order(&h, KTRACE_ORDER_STREAM_WAIT_EVENT, 0x200, 0xe, 1);
	hand_launch(&h, 0x200, 1, 0x1000);
	assert_false(concurrent(&h, 1));
}

/* Launch 0 on a blocking stream, then one synchronous (or asynchronous)
 * copy or memset on the legacy stream (which waits for launch 0), then
 * launch 1 on a non-blocking stream, both launches writing 0x1000: only
 * what the call told the host can order launch 1.  Is launch 1 concurrent
 * with launch 0?  And is the copy or memset, writing 0x1000 too when it
 * writes device memory, concurrent with launch 1? */
struct sync_case {
	uint32_t type, dir, flags;
	int pinned;
	int orders_before; /* launch 0 known complete when the call returned */
	int orders_itself; /* the operation itself known complete */
};

static void check_sync_case(const struct sync_case *c)
{
	struct hand h;
	struct diff_order_writer w;
	int oom;
	hand_init(&h);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x100, 0, 1);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x200, 0, 1);
	h.o[1].stream_flags = KTRACE_STREAM_NON_BLOCKING;
	hand_launch(&h, 0x100, 1, 0x1000);
	hand_op(&h, c->type, c->dir, c->flags, c->pinned, 0, 0x1000);
	hand_launch(&h, 0x200, 1, 0x1000);
	struct diff_order *o = ktrace_diff_order_build(&h.t, writes_all, NULL, &oom);
	assert_non_null(o);
	int with_launch0 = ktrace_diff_order_concurrent_writer(o, 1, 0x1000, 256, &w) && w.launch == &h.l[0];
	if (with_launch0 == c->orders_before)
		fail_msg("type %u dir %u flags 0x%x pinned %d: launch 1 %s concurrent with launch 0", c->type, c->dir,
			 c->flags, c->pinned, with_launch0 ? "is" : "is not");
	/* the operation's own bytes, if it writes the device: the host side of
	 * a copy to the host is not device memory and is never a writer */
	int writes = c->type == TM_OP_MEMSET || c->dir != KTRACE_COPY_DTOH;
	int with_op = 0;
	if (writes && !with_launch0)
		with_op = ktrace_diff_order_concurrent_writer(o, 1, 0x1000, 256, &w) && w.op == &h.op[0];
	if (writes && !c->orders_before)
		with_op = 1; /* launch 0 is reported first; the operation is no more ordered */
	if (writes && with_op == c->orders_itself)
		fail_msg("type %u dir %u flags 0x%x pinned %d: the operation %s concurrent with launch 1", c->type,
			 c->dir, c->flags, c->pinned, with_op ? "is" : "is not");
	ktrace_diff_order_free(o);
}

/* Synchronous copies and memsets order the host as the driver documents
 * ("API synchronization behavior"): a copy to host memory returns once it
 * completed; from pinned host memory to the device too; from pageable host
 * memory the stream is synchronised before the copy starts, and the copy
 * may still be in flight; device-to-device and host-to-host copies, a
 * memset into device memory and every asynchronous form do not synchronise
 * the host; a memset into pinned host memory does. */
static void test_synchronous_copies_and_memsets(void **state)
{
	static const struct sync_case cases[] = {
		{ TM_OP_MEMCPY, KTRACE_COPY_DTOH, 0, 0, 1, 1 },
		{ TM_OP_MEMCPY, KTRACE_COPY_DTOH, 0, 1, 1, 1 },
		{ TM_OP_MEMCPY, KTRACE_COPY_HTOD, 0, 1, 1, 1 },
		{ TM_OP_MEMCPY, KTRACE_COPY_HTOD, 0, 0, 1, 0 },  /* pageable: the copy may be in flight */
		{ TM_OP_MEMCPY, KTRACE_COPY_DTOD, 0, 0, 0, 0 },
		{ TM_OP_MEMCPY, KTRACE_COPY_PEER, 0, 0, 0, 0 },
		{ TM_OP_MEMCPY, KTRACE_COPY_HTOH, 0, 0, 0, 0 },
		{ TM_OP_MEMCPY, KTRACE_COPY_UNKNOWN, 0, 0, 0, 0 },
		{ TM_OP_MEMSET, 0, 0, 0, 0, 0 },                 /* device memory */
		{ TM_OP_MEMSET, 0, 0, 1, 1, 1 },                 /* pinned host memory */
		{ TM_OP_MEMSET, 0, KTRACE_COPYF_2D, 0, 0, 0 },
		{ TM_OP_MEMCPY, KTRACE_COPY_DTOH, KTRACE_COPYF_ASYNC, 0, 0, 0 },
		{ TM_OP_MEMCPY, KTRACE_COPY_HTOD, KTRACE_COPYF_ASYNC, 1, 0, 0 },
		{ TM_OP_MEMSET, 0, KTRACE_COPYF_ASYNC, 1, 0, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_sync_case(&cases[i]);
}

/* A race a synchronous device-to-device copy used to hide: the copy on the
 * legacy stream waits for launch 0 (a blocking stream) but the host does
 * not wait for the copy, so launch 1, issued after it on a non-blocking
 * stream, may run with launch 0: reported. */
static void test_dtod_copy_hides_no_race(void **state)
{
	struct hand h;
	int oom;
	struct diff_order_race races[4];
	(void)state;
	hand_init(&h);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x100, 0, 1);
	hand_order(&h, KTRACE_ORDER_STREAM_CREATE, 0x200, 0, 1);
	h.o[1].stream_flags = KTRACE_STREAM_NON_BLOCKING;
	hand_launch(&h, 0x100, 1, 0x1000);
	hand_op(&h, TM_OP_MEMCPY, KTRACE_COPY_DTOD, 0, 0, 0, 0x9000);
	hand_launch(&h, 0x200, 1, 0x1000);
	struct diff_order *o = ktrace_diff_order_build(&h.t, writes_all, NULL, &oom);
	assert_non_null(o);
	assert_int_equal(ktrace_diff_order_races(o, races, 4), 1);
	assert_int_equal(races[0].first, 0);
	assert_int_equal(races[0].second, 1);
	ktrace_diff_order_free(o);
	/* a synchronous copy to the host in its place waits: no race */
	h.op[0].dir = KTRACE_COPY_DTOH;
	o = ktrace_diff_order_build(&h.t, writes_all, NULL, &oom);
	assert_non_null(o);
	assert_int_equal(ktrace_diff_order_races(o, races, 4), 0);
	ktrace_diff_order_free(o);
}

static int setup(void **state)
{
	(void)state;
	return kt_scratch_dir(tmpdir, sizeof tmpdir, "diff-order") ? 0 : -1;
}

/* The folder and everything in it: the traces and the reports. */
static int teardown(void **state)
{
	char cmd[sizeof tmpdir + 16];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent_writers_identical_result),
		cmocka_unit_test(test_event_order_makes_digests_evidence),
		cmocka_unit_test(test_legacy_stream_implicit_sync),
		cmocka_unit_test(test_nonblocking_stream_not_ordered_by_legacy),
		cmocka_unit_test(test_host_sync_orders),
		cmocka_unit_test(test_real_race_reported),
		cmocka_unit_test(test_reader_concurrent_with_writer),
		cmocka_unit_test(test_reader_ordered_by_event),
		cmocka_unit_test(test_ww_race_overwritten_is_not_the_cause),
		cmocka_unit_test(test_unknown_order_is_conservative),
		cmocka_unit_test(test_order_not_recorded),
		cmocka_unit_test(test_handle_reused_after_destroy),
		cmocka_unit_test(test_host_sync_is_per_thread),
		cmocka_unit_test(test_event_latest_record),
		cmocka_unit_test(test_synchronous_copies_and_memsets),
		cmocka_unit_test(test_dtod_copy_hides_no_race),
		cmocka_unit_test(test_unknown_order_window_closes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
