/* tools/diff/job_report.c: the job diff's verdict as text (job_json.c: as JSON).
 *
 * Owns the text report of a job: the runs and what was compared, the
 * result line, the culprit (a rank's launch, or a collective with NCCL's
 * version and settings in each run), one line per rank saying where its
 * first divergence comes from, the culprit's divergence as its rank's own
 * diff prints it, the findings, the warnings, and the confirmation: by
 * replay when `ktrace check` gives the culprit rank's comparison with its
 * replays (diff_confirm.c prints those), else "digests only".  Calls
 * diff/'s report helpers and model/.
 */
#include "tools/diff/job_internal.h"

#include <inttypes.h>

#include "tools/diff/diff_internal.h"

static void text_header(FILE *f, const struct job_result *r)
{
	size_t compared = 0;
	uint64_t launches = 0;

	for (size_t i = 0; i < r->nranks; i++) {
		compared += r->ranks[i].status >= 0;
		launches += r->ranks[i].matched;
	}
	fprintf(f, "job A: %s (%d rank%s)\n", r->label_a, r->world_a, r->world_a == 1 ? "" : "s");
	fprintf(f, "job B: %s (%d rank%s)\n", r->label_b, r->world_b, r->world_b == 1 ? "" : "s");
	fprintf(f, "ranks: %zu compared, %" PRIu64 " launches matched", compared, launches);
	if (r->skipped_a || r->skipped_b)
		fprintf(f, "; traces of helper processes left out (no launch, no JOB record): %" PRIu64 " in A, %" PRIu64
			   " in B", r->skipped_a, r->skipped_b);
	fprintf(f, "\nNCCL: %" PRIu64 " collective%s matched across ranks, %" PRIu64 " send%s with %s receive%s; %" PRIu64
		   " buffer digest%s compared between the runs\n\n",
		r->coll_matched, r->coll_matched == 1 ? "" : "s", r->p2p_matched, r->p2p_matched == 1 ? "" : "s",
		r->p2p_matched == 1 ? "its" : "their", r->p2p_matched == 1 ? "" : "s", r->digests_compared,
		r->digests_compared == 1 ? "" : "s");
}

static void text_collective(FILE *f, const struct job_result *r)
{
	const struct job_collective *c = &r->coll;
	char op[160];

	ktrace_job_op_str(&c->op, op, sizeof op);
	fprintf(f, "result: DIVERGED, unconfirmed (digests only): %s is non-deterministic, the first divergence in "
		   "causal order\n", op);
	fprintf(f, "  %s; its output differs on %d rank%s\n",
		c->inputs_compared ? "its inputs were identical on every rank (digests of the send buffers)" :
				     "no rank's difference reached it (its buffers' digests were not all recorded)",
		c->ranks_differing, c->ranks_differing == 1 ? "" : "s");
	fprintf(f, "  NCCL %s in A, %s in B\n", c->version_a[0] ? c->version_a : "(version unknown)",
		c->version_b[0] ? c->version_b : "(version unknown)");
	if (c->settings_differ[0])
		fprintf(f, "  NCCL settings differ between the runs: %s\n", c->settings_differ);
	fprintf(f, "  settings in A: %s\n  settings in B: %s\n", c->settings_a[0] ? c->settings_a : "(none)",
		c->settings_b[0] ? c->settings_b : "(none)");
}

static const char *verdict_words(int verdict)
{
	switch (verdict) {
	case JOB_VERDICT_KERNEL_NONDET: return "its kernel is non-deterministic (its inputs were identical on its rank)";
	case JOB_VERDICT_INPUTS_DIFFER: return "an input differed on its rank (see the writers below)";
	case JOB_VERDICT_INPUTS_UNVERIFIED: return "some of its inputs could not be compared";
	default: return "";
	}
}

/* "DIVERGED, unconfirmed (digests only)", or what the culprit's replays said. */
static void result_words(const struct diff_result *culprit_diff, char *buf, size_t cap)
{
	int v = culprit_diff && culprit_diff->confirm ? ktrace_diff_verdict(culprit_diff) : DIFF_VERDICT_DIGESTS_ONLY;

	snprintf(buf, cap, "%s, %s", v == DIFF_VERDICT_UNCONFIRMED ? "digests differ" : "DIVERGED",
		 ktrace_diff_verdict_name(v));
}

static void text_result(FILE *f, const struct job_result *r, const struct diff_result *culprit_diff)
{
	const struct job_rank *e = r->culprit >= 0 ? &r->ranks[r->culprit] : NULL;
	char words[160];

	result_words(culprit_diff, words, sizeof words);
	if (r->verdict == JOB_VERDICT_COLLECTIVE_NONDET) {
		text_collective(f, r);
	} else if (e) {
		fprintf(f, "result: %s: rank %d diverged first in causal order: %s\n", words, e->rank,
			verdict_words(r->verdict));
		if (e->has_div)
			fprintf(f, "culprit: rank %d, %s: launch %" PRIu64 " in A, %" PRIu64 " in B (occurrence %" PRIu64
				   " of %s)\n", e->rank, e->div.kernel, e->div.seq_a, e->div.seq_b, e->div.occurrence,
				e->div.mangled[0] ? e->div.mangled : "?");
	} else if (r->verdict == JOB_VERDICT_PROGRAM_RESULTS) {
		fputs("result: PROGRAM RESULTS DIFFER: no launch diverged, but what a rank copied to the host differs\n", f);
	} else if (r->verdict == JOB_VERDICT_RANKS_DIFFER) {
		fputs("result: RANKS DIFFER: no launch diverged, but the runs' ranks differ (see the findings)\n", f);
	} else if (r->verdict == JOB_VERDICT_NOT_COMPARED) {
		fputs("result: NOT COMPARED: the runs could not be compared (see the findings)\n", f);
	} else {
		fputs("result: identical: no rank diverged\n", f);
	}
}

static void text_ranks(FILE *f, const struct job_result *r)
{
	fputs("\nranks (where each one's first divergence comes from):\n", f);
	for (size_t i = 0; i < r->nranks; i++) {
		const struct job_rank *e = &r->ranks[i];
		const char *role = (long)i == r->culprit ? "culprit" :
				   e->role == JOB_ROLE_NOT_COMPARED ? "not compared" : ktrace_job_role_name(e->role);
		fprintf(f, "  rank %d: %s: %s\n", e->rank, role, e->explanation ? e->explanation : "");
	}
}

static void text_lists(FILE *f, const struct job_result *r)
{
	if (r->nfindings)
		fputs("\nfindings:\n", f);
	for (size_t i = 0; i < r->nfindings; i++)
		fprintf(f, "  - %s\n", r->findings[i].text);
	if (r->nwarnings)
		fputs("\nwarnings:\n", f);
	for (size_t i = 0; i < r->nwarnings; i++)
		fprintf(f, "  - %s\n", r->warnings[i]);
}

void ktrace_job_report_text(FILE *f, const struct job_result *r, const struct diff_result *culprit_diff)
{
	const struct job_rank *e = r->culprit >= 0 ? &r->ranks[r->culprit] : NULL;

	text_header(f, r);
	text_result(f, r, culprit_diff);
	text_ranks(f, r);
	if (e && e->has_div && e->div.detail) {
		fprintf(f, "\nthe culprit's first divergence, as rank %d's own diff reports it (A: %s, B: %s):\n", e->rank,
			e->path_a, e->path_b);
		fputs(e->div.detail, f);
	}
	text_lists(f, r);
	if (culprit_diff && culprit_diff->confirm)
		ktrace_diff_text_confirmation(f, culprit_diff);
	else if (r->verdict == JOB_VERDICT_COLLECTIVE_NONDET)
		fputs("\nconfirmation: none: digests only (a collective cannot be replayed in isolation)\n", f);
	else if (e)
		fputs("\nconfirmation: none: digests only (`ktrace check` replays the culprit's launch on its rank to "
		      "confirm it)\n", f);
}
