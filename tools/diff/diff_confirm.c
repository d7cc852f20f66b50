/* tools/diff/diff_confirm.c: what a diff's verdict rests on, told as text.
 *
 * Owns the verdict of a comparison (identical; digests differ, unconfirmed
 * because no replay was possible; confirmed or not by `ktrace check`'s
 * replays of the divergent launches; nothing compared), the text of the
 * confirmation (one entry per launch replayed: confirmed with the size of
 * the difference per output, not reproduced with what else could explain
 * the digests, not replayable and why), and the names that look like
 * compile or autotuning work.  The JSON of the same is diff_report.c's;
 * the CI reports use the lines built here.
 */
#include "tools/diff/diff_internal.h"

#include <inttypes.h>
#include <string.h>

#include "tools/model/value.h"

const struct diff_confirm *ktrace_diff_confirm_of(const struct diff_confirmation *c, const struct tm_launch *la)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].launch == la)
			return &c->v[i];
	return NULL;
}

/* Launch la was replayed in isolation and that did not reproduce its difference. */
static int not_reproduced(const struct diff_result *r, const struct tm_launch *la)
{
	const struct diff_confirm *c = ktrace_diff_confirm_of(r->confirm, la);

	return c && c->outcome == KTRACE_REPLAY_NOT_REPRODUCED;
}

int ktrace_diff_verdict(const struct diff_result *r)
{
	if (!ktrace_diff_compared(r))
		return DIFF_VERDICT_NOTHING_COMPARED;
	if (!r->ndivs)
		return DIFF_VERDICT_IDENTICAL;
	if (r->confirm && r->confirm->confirmed >= 0)
		return DIFF_VERDICT_CONFIRMED;
	/* a race explains it: the reader's input set aside for an unordered
	 * writer, or a write/write race over its input when its own replays in
	 * isolation did not reproduce it (diff_rwrace.c) */
	if (r->race_first || (r->race_first_ww && not_reproduced(r, r->divs[0].la)))
		return DIFF_VERDICT_RACE;
	return r->confirm ? DIFF_VERDICT_UNCONFIRMED : DIFF_VERDICT_DIGESTS_ONLY;
}

const char *ktrace_diff_verdict_name(int v)
{
	switch (v) {
	case DIFF_VERDICT_IDENTICAL: return "identical";
	case DIFF_VERDICT_DIGESTS_ONLY: return "unconfirmed (digests only)";
	case DIFF_VERDICT_CONFIRMED: return "confirmed non-deterministic";
	case DIFF_VERDICT_UNCONFIRMED: return "unconfirmed (not reproduced by replay)";
	case DIFF_VERDICT_RACE: return "race";
	default: return "nothing compared";
	}
}

void ktrace_diff_confirm_line(const struct diff_confirm *c, char *buf, size_t cap)
{
	const struct ktrace_replay_report *rep = &c->report;
	size_t o = 0;

	buf[0] = '\0';
	if (c->have_report && c->report.body)
		ktrace_appendf(buf, cap, &o, "iteration %u of %u: ", c->report.iteration,
			       ktrace_tm_graph_ref(c->launch)->iterations);
	if (c->outcome == KTRACE_REPLAY_CONFIRMED)
		ktrace_appendf(buf, cap, &o,
			       "confirmed non-deterministic (%u distinct results in %u runs: the program's launch "
			       "and %u replays)",
			       rep->distinct, rep->runs_done + 1, rep->runs_done);
	else if (c->outcome == KTRACE_REPLAY_NOT_REPRODUCED)
		ktrace_appendf(buf, cap, &o, "not reproduced in %u isolated replays", rep->runs_done);
	else if (c->have_report)
		ktrace_appendf(buf, cap, &o, "not replayable (%s%s%s)", ktrace_replay_reason_text(rep->reason),
			       rep->detail[0] ? ": " : "", rep->detail);
	else
		ktrace_appendf(buf, cap, &o, "not replayable (%s)", c->why);
}

/* "out (argument 1, float*, 256 B): 3 of 64 elements differ (4.69%) in 7 of
 * 8 replays, first at [0, 5, 9]; max abs 1.2e-07, max rel 3e-08, max 2 ULP" */
static void text_output(FILE *f, const struct ktrace_replay_buffer_result *b, uint32_t runs)
{
	const struct ktrace_replay_diff *d = &b->diff;
	int bytes = b->elem == KTRACE_ELEM_UNKNOWN;

	fprintf(f, "      %s (argument %u, %s, %" PRIu64 " bytes): %" PRIu64 " of %" PRIu64 " %s differ (%.3g%%) in %u of "
		   "%u replays, first at [", b->name[0] ? b->name : "?", b->arg_index, b->type[0] ? b->type : "type unknown",
		b->size, d->differing, d->elements, bytes ? "bytes" : "elements",
		d->elements ? 100.0 * (double)d->differing / (double)d->elements : 0.0, b->replays_differing, runs);
	for (uint32_t i = 0; i < d->nfirst; i++)
		fprintf(f, "%s%" PRIu64, i ? ", " : "", d->first[i]);
	fprintf(f, "%s]", d->differing > d->nfirst ? ", ..." : "");
	if (ktrace_replay_elem_is_float(b->elem)) {
		fprintf(f, "; max abs %.3g, max rel %.3g, ", d->max_abs, d->max_rel);
		if (d->max_ulp == UINT64_MAX)
			fprintf(f, "NaN against a number in %" PRIu64 " elements", d->nan_mismatches);
		else
			fprintf(f, "max %" PRIu64 " ULP", d->max_ulp);
	} else if (!bytes) {
		fprintf(f, "; max abs %.0f", d->max_abs);
	}
	fputc('\n', f);
}

/* A divergence the replays did not reproduce: the evidence for what else
 * explains it, and "unconfirmed" when nothing but the replay's own limit does. */
static void text_unreproduced(FILE *f, const struct diff_result *r, const struct diff_confirm *c)
{
	struct diff_explanation ex[DIFF_EXPLANATIONS_MAX];
	size_t n = ktrace_diff_explain(r, c->launch, ex, DIFF_EXPLANATIONS_MAX);

	fputs("      not proof of determinism; what else could explain the digests:\n", f);
	for (size_t k = 0; k < n; k++)
		fprintf(f, "      - %s\n", ex[k].text);
	if (n == 1)
		fputs("      nothing else in the traces explains it: unconfirmed\n", f);
}

static void text_attempt(FILE *f, size_t i, const struct diff_result *r, const struct diff_confirm *c)
{
	char line[512];

	ktrace_diff_confirm_line(c, line, sizeof line);
	fprintf(f, "  %zu. %s: %s, launch %" PRIu64 " in A (occurrence %" PRIu64 " of %s): %s\n", i + 1, c->role,
		ktrace_tm_kernel_name(c->launch->look->kernel), c->launch->seq, c->occurrence,
		c->launch->look->kernel->name[0] ? c->launch->look->kernel->name : "?", line);
	if (c->outcome == KTRACE_REPLAY_CONFIRMED) {
		for (uint32_t k = 0; k < c->report.nbuffers; k++)
			if (c->report.buffers[k].replays_differing)
				text_output(f, &c->report.buffers[k], c->report.runs_done);
	} else if (c->outcome == KTRACE_REPLAY_NOT_REPRODUCED) {
		text_unreproduced(f, r, c);
	}
	ktrace_diff_text_pystacks(f, c);
}

void ktrace_diff_text_confirmation(FILE *f, const struct diff_result *r)
{
	const struct diff_confirmation *c = r->confirm;

	if (!c || !r->ndivs)
		return;
	fprintf(f, "\nconfirmation by replay (%u replays per run, at most %u runs):\n", c->replays, c->max_runs);
	if (!c->n)
		fputs("  no launch replayed (--max-replays 0)\n", f);
	for (size_t i = 0; i < c->n; i++)
		text_attempt(f, i, r, &c->v[i]);
	if (c->confirmed >= 0) {
		const struct diff_confirm *v = &c->v[c->confirmed];
		char where[512], line[1024];

		fprintf(f, "verdict: confirmed non-deterministic: %s", ktrace_tm_kernel_name(v->launch->look->kernel));
		if (v->report.body)
			fprintf(f, " iteration %u of %u confirmed by replay", v->report.iteration,
				ktrace_tm_graph_ref(v->launch)->iterations);
		fprintf(f, " (launch %" PRIu64 " in A)\n", v->launch->seq);
		if (*ktrace_diff_where_short(r, v->launch, where, sizeof where))
			fprintf(f, "  op: %s\n", where);
		if (*ktrace_diff_python_line(r, v, line, sizeof line))
			fprintf(f, "  Python: %s\n", line);
	}
	else
		fputs("verdict: unconfirmed: the digests differ, but no replay reproduced a difference from identical "
		      "inputs\n", f);
}

int ktrace_diff_looks_like_compile_work(const char *name)
{
	/* Inductor's generated kernels (triton_poi_, triton_red_, triton_per_,
	 * triton_tem_: templates, the candidates autotuning benchmarks) and
	 * names that say so */
	return !strncmp(name, "triton_", 7) || strstr(name, "autotune") || strstr(name, "benchmark");
}
