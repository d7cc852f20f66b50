/* tools/diff_ci.c: the CI reports of a determinism diff.
 *
 * Owns JUnit XML (a testsuite per comparison, a testcase per kernel name),
 * GitHub Actions workflow commands (one annotation per divergent kernel) and
 * the Markdown summary appended to $GITHUB_STEP_SUMMARY.  Each carries what
 * the verdict rests on: digests alone (ktrace-diff: a divergence fails,
 * labelled unconfirmed) or `ktrace check`'s replays (a confirmed kernel
 * fails; digests that differ without confirmation are a skipped test case,
 * a warning).
 */
#include "tools/diff.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Render a divergence's text block into a malloc'd string. */
static char *divergence_text(const struct diff_divergence *d, const char *title)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	ktrace_diff_text_divergence(m, d, title);
	fclose(m);
	return buf;
}

/* ---- JUnit ------------------------------------------------------------------------ */

static void xml_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
				fputc('?', f); /* not allowed in XML 1.0 */
			else
				fputc(c, f);
		}
	}
}

enum { TC_PASS, TC_FAIL, TC_SKIP };

/* Was a launch of kernel `name` confirmed non-deterministic by a replay? */
static const struct diff_confirm *kernel_confirmed(const struct diff_result *r, const char *name)
{
	const struct diff_confirmation *c = r->confirm;

	if (!c || c->confirmed < 0)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].outcome == KTRACE_REPLAY_CONFIRMED && !strcmp(ktrace_tm_kernel_name(c->v[i].launch->kernel), name))
			return &c->v[i];
	return NULL;
}

/* A divergent kernel: a failure on digests alone (ktrace-diff) or when a
 * replay confirmed it; skipped, with why, when the replays did not. */
static int diverged_state(const struct diff_result *r, const struct diff_kernel_stat *s, char *msg, size_t cap)
{
	const struct diff_divergence *d = &r->divs[s->first_div];
	const struct diff_confirm *c = kernel_confirmed(r, s->name), *tried = ktrace_diff_confirm_of(r->confirm, d->la);
	char line[400], conf[512];

	ktrace_diff_summary_line(d, line, sizeof line);
	if (!r->confirm) {
		snprintf(msg, cap, "unconfirmed (digests only): %" PRIu64 " of %" PRIu64 " launches diverged; first: %s",
			 s->diverged, s->matched, line);
		return TC_FAIL;
	}
	if (c || tried)
		ktrace_diff_confirm_line(c ? c : tried, conf, sizeof conf);
	else
		snprintf(conf, sizeof conf, "not replayed");
	snprintf(msg, cap, "%s: %" PRIu64 " of %" PRIu64 " launches diverged by their digests; first: %s",
		 c ? conf : "digests differ, not confirmed by replay", s->diverged, s->matched, line);
	if (!c) {
		size_t used = strlen(msg);
		snprintf(msg + used, cap - used, " (replay: %s)", conf);
	}
	return c ? TC_FAIL : TC_SKIP;
}

static int testcase_state(const struct diff_result *r, const struct diff_kernel_stat *s, char *msg, size_t cap)
{
	if (s->diverged)
		return diverged_state(r, s, msg, cap);
	if (!s->matched) {
		snprintf(msg, cap, "only in run %s (%" PRIu64 " launches)", s->only_a ? "A" : "B",
			 s->only_a ? s->only_a : s->only_b);
		return r->strict ? TC_FAIL : TC_SKIP;
	}
	if (s->unverified == s->matched) {
		snprintf(msg, cap, "not verified: none of its %" PRIu64 " launches could be compared (no hashes)",
			 s->matched);
		return r->strict ? TC_FAIL : TC_SKIP;
	}
	if (r->strict && (s->unverified || s->only_a || s->only_b)) {
		snprintf(msg, cap, "%" PRIu64 " unverified, %" PRIu64 " only in A, %" PRIu64 " only in B (--strict)",
			 s->unverified, s->only_a, s->only_b);
		return TC_FAIL;
	}
	msg[0] = '\0';
	return TC_PASS;
}

static const char *failure_type(const struct diff_result *r, const struct diff_kernel_stat *s)
{
	if (!s->diverged)
		return "strict";
	if (kernel_confirmed(r, s->name))
		return "confirmed_nondeterministic";
	return ktrace_diff_class_name(r->divs[s->first_div].cls);
}

int ktrace_diff_report_junit(const char *path, const struct diff_result *const *rs, size_t n, char *err,
			     size_t errlen)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: cannot write the JUnit report: %s", path, strerror(errno));
		return -1;
	}
	size_t tests = 0, fails = 0, skips = 0;
	char msg[1200];
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < rs[i]->nkernels; k++) {
			int st = testcase_state(rs[i], &rs[i]->kernels[k], msg, sizeof msg);
			tests++;
			fails += st == TC_FAIL;
			skips += st == TC_SKIP;
		}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"ktrace determinism\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
		tests, fails, skips);
	for (size_t i = 0; i < n; i++) {
		const struct diff_result *r = rs[i];
		size_t t = 0, fl = 0, sk = 0;
		for (size_t k = 0; k < r->nkernels; k++) {
			int st = testcase_state(r, &r->kernels[k], msg, sizeof msg);
			t++;
			fl += st == TC_FAIL;
			sk += st == TC_SKIP;
		}
		fprintf(f, "  <testsuite name=\"");
		xml_text(f, r->label_a);
		fprintf(f, " vs ");
		xml_text(f, r->label_b);
		fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n", t, fl, sk);
		for (size_t k = 0; k < r->nkernels; k++) {
			const struct diff_kernel_stat *s = &r->kernels[k];
			int st = testcase_state(r, s, msg, sizeof msg);
			fprintf(f, "    <testcase classname=\"ktrace.determinism\" name=\"");
			xml_text(f, s->name);
			if (st == TC_PASS) {
				fprintf(f, "\"/>\n");
				continue;
			}
			fprintf(f, "\">\n");
			if (st == TC_SKIP) {
				fprintf(f, "      <skipped message=\"");
				xml_text(f, msg);
				fprintf(f, "\"/>\n");
			} else {
				fprintf(f, "      <failure type=\"%s\" message=\"", failure_type(r, s));
				xml_text(f, msg);
				fprintf(f, "\">");
				if (s->diverged) {
					char *txt = divergence_text(&r->divs[s->first_div], "first divergence");
					xml_text(f, txt ? txt : "");
					free(txt);
				}
				fprintf(f, "</failure>\n");
			}
			fprintf(f, "    </testcase>\n");
		}
		if (r->nwarnings) {
			fprintf(f, "    <system-err>");
			for (size_t w = 0; w < r->nwarnings; w++) {
				fprintf(f, "warning: ");
				xml_text(f, r->warnings[w]);
				fprintf(f, "\n");
			}
			fprintf(f, "</system-err>\n");
		}
		fprintf(f, "  </testsuite>\n");
	}
	fprintf(f, "</testsuites>\n");
	if (ferror(f) | fclose(f)) {
		snprintf(err, errlen, "%s: error writing the JUnit report", path);
		return -1;
	}
	return 0;
}

/* ---- GitHub Actions ------------------------------------------------------------------- */

/* Workflow command escaping: data (%, CR, LF), properties (also ':' and ','). */
static void gh_escape(FILE *f, const char *s, int property)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '%': fputs("%25", f); break;
		case '\r': fputs("%0D", f); break;
		case '\n': fputs("%0A", f); break;
		case ':': if (property) fputs("%3A", f); else fputc(':', f); break;
		case ',': if (property) fputs("%2C", f); else fputc(',', f); break;
		default: fputc(*s, f);
		}
	}
}

#define GH_MAX_ERRORS 10 /* GitHub shows at most 10 error annotations per step */

static void gh_command(FILE *f, const char *cmd, const char *title, const char *text, const char *tail)
{
	fprintf(f, "::%s title=", cmd);
	gh_escape(f, title, 1);
	fputs("::", f);
	gh_escape(f, text, 0);
	fputs(tail, f);
	fputc('\n', f);
}

/* One annotation for a divergent kernel's first divergence: an error on
 * digests alone (ktrace-diff) or when a replay confirmed it, a warning when
 * the replays did not. */
static void gh_divergence(FILE *f, const struct diff_result *r, size_t i)
{
	const struct diff_divergence *d = &r->divs[i];
	const char *name = ktrace_tm_kernel_name(d->la->kernel);
	const struct diff_confirm *c = kernel_confirmed(r, name), *tried = ktrace_diff_confirm_of(r->confirm, d->la);
	char title[300], line[600], text[1200], conf[512] = "";
	const char *what = d->cls == DIFF_CLASS_KERNEL_NONDET ? "non-deterministic kernel" :
			   d->cls == DIFF_CLASS_INPUTS_DIFFER ? "divergence (inputs differ)" : "divergence";

	ktrace_diff_summary_line(d, line, sizeof line);
	if (c || tried)
		ktrace_diff_confirm_line(c ? c : tried, conf, sizeof conf);
	/* titles stay short: long template names are cut */
	if (!r->confirm)
		snprintf(title, sizeof title, "ktrace: %s in %.120s%s (unconfirmed: digests only)", what, name,
			 strlen(name) > 120 ? "..." : "");
	else if (c)
		snprintf(title, sizeof title, "ktrace: confirmed non-deterministic kernel %.120s%s", name,
			 strlen(name) > 120 ? "..." : "");
	else
		snprintf(title, sizeof title, "ktrace: digests differ in %.120s%s (not confirmed by replay)", name,
			 strlen(name) > 120 ? "..." : "");
	snprintf(text, sizeof text, "%s%s%s", line, conf[0] ? "; replay: " : "", conf);
	gh_command(f, !r->confirm || c ? "error" : "warning", title, text, i == 0 ? " (first divergence)" : "");
}

void ktrace_diff_report_github(FILE *f, const struct diff_result *r, const struct diff_opts *o)
{
	size_t shown = 0, divk = 0;
	char line[600];
	(void)o;
	for (size_t k = 0; k < r->nkernels; k++)
		divk += r->kernels[k].diverged != 0;
	/* one annotation per divergent kernel, in the order of their first divergence */
	for (size_t i = 0; i < r->ndivs && shown < GH_MAX_ERRORS; i++) {
		const struct diff_divergence *d = &r->divs[i];
		if (!d->cls)
			continue;
		const char *name = ktrace_tm_kernel_name(d->la->kernel);
		int first_of_kernel = 1;
		for (size_t j = 0; j < i && first_of_kernel; j++)
			first_of_kernel = strcmp(ktrace_tm_kernel_name(r->divs[j].la->kernel), name) != 0;
		if (!first_of_kernel)
			continue;
		gh_divergence(f, r, i);
		shown++;
	}
	if (divk > shown) {
		snprintf(line, sizeof line, "%zu more kernels diverged; see the full report", divk - shown);
		gh_command(f, "notice", "ktrace", line, "");
	}
	for (size_t w = 0; w < r->nwarnings; w++)
		gh_command(f, "warning", "ktrace", r->warnings[w], "");
	if (r->strict && !r->ndivs && r->status == 1) {
		snprintf(line, sizeof line, "--strict: %" PRIu64 " launches only in A, %" PRIu64 " only in B, %" PRIu64
			 " unverified", r->only_a, r->only_b, r->unverified);
		gh_command(f, "error", "ktrace determinism check", line, "");
	}
	if (!ktrace_diff_compared(r)) {
		snprintf(line, sizeof line, "nothing compared: none of the %" PRIu64 " launches could be compared (%" PRIu64
			 " unverified, %" PRIu64 " in one run only)", r->launches_a, r->unverified, r->only_a + r->only_b);
		gh_command(f, "error", "ktrace determinism check", line, "");
	} else if (!r->ndivs) {
		snprintf(line, sizeof line, "no divergence: %" PRIu64 " launches compared, %" PRIu64 " unverified",
			 r->matched, r->unverified);
		gh_command(f, "notice", "ktrace determinism check", line, "");
	}
}

/* ---- Markdown ---------------------------------------------------------------------------- */

/* Inside a table cell's code span: '|' must be escaped, backticks avoided. */
static void md_code(FILE *f, const char *s)
{
	fputc('`', f);
	for (; s && *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '`')
			fputc('\'', f);
		else if (*s == '\n')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
	fputc('`', f);
}

static void md_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (strchr("\\`*_[]<>|#", *s))
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

#define MD_MAX_ROWS 50

static const char *md_heading(const struct diff_result *r)
{
	switch (ktrace_diff_verdict(r)) {
	case DIFF_VERDICT_NOTHING_COMPARED: return "NOTHING COMPARED (an error)";
	case DIFF_VERDICT_DIGESTS_ONLY: return "DIVERGED (unconfirmed: digests only)";
	case DIFF_VERDICT_CONFIRMED: return "DIVERGED, confirmed non-deterministic";
	case DIFF_VERDICT_UNCONFIRMED: return "digests differ, not confirmed by replay";
	default: return r->status ? "FAILED (--strict)" : "no divergence";
	}
}

static void md_first_divergence(FILE *f, const struct diff_divergence *d)
{
	fprintf(f, "**First divergence:** ");
	md_code(f, ktrace_tm_kernel_name(d->la->kernel));
	fprintf(f, ", launch %" PRIu64 " in A, %" PRIu64 " in B. ", d->la->seq, d->lb->seq);
	if (d->noutputs) {
		fprintf(f, "Output%s ", d->noutputs == 1 ? "" : "s");
		for (size_t i = 0; i < d->noutputs; i++) {
			if (i)
				fprintf(f, ", ");
			md_code(f, d->outputs[i].name);
		}
		fprintf(f, " differ%s. ", d->noutputs == 1 ? "s" : "");
	}
	if (d->cls == DIFF_CLASS_KERNEL_NONDET) {
		fprintf(f, "**All inputs identical: the kernel itself is non-deterministic.**\n\n");
	} else if (d->cls == DIFF_CLASS_INPUTS_DIFFER) {
		fprintf(f, "**Inputs differ** (");
		for (size_t i = 0; i < d->ninputs; i++) {
			if (i)
				fprintf(f, ", ");
			md_code(f, d->inputs[i].name);
		}
		fprintf(f, "): the divergence comes from upstream.\n\n");
	} else {
		fprintf(f, "Some inputs were not hashed: cannot tell whether the kernel is at fault.\n\n");
	}
}

/* What the verdict rests on: digests alone, or the replays and their outcomes. */
static void md_confirmation(FILE *f, const struct diff_result *r)
{
	const struct diff_confirmation *c = r->confirm;
	char line[512];

	if (!c) {
		fprintf(f, "**Confirmation:** none, digests only (`ktrace check` replays a divergent launch to "
			   "confirm it).\n\n");
		return;
	}
	fprintf(f, "**Confirmation by replay** (%u replays per run):\n\n", c->replays);
	if (!c->n)
		fprintf(f, "- no launch replayed (`--max-replays 0`)\n");
	for (size_t i = 0; i < c->n; i++) {
		ktrace_diff_confirm_line(&c->v[i], line, sizeof line);
		fprintf(f, "- ");
		md_text(f, c->v[i].role);
		fprintf(f, ": ");
		md_code(f, ktrace_tm_kernel_name(c->v[i].launch->kernel));
		fprintf(f, ", launch %" PRIu64 " in A: ", c->v[i].launch->seq);
		md_text(f, line);
		fprintf(f, "\n");
	}
	fprintf(f, "\n%s\n\n", c->confirmed >= 0 ? "**Confirmed: a kernel gives different results from identical inputs.**"
			       : "Not confirmed: the digests differ, but no replay reproduced a difference from "
				 "identical inputs (not proof of determinism).");
}

static void md_kernel_table(FILE *f, const struct diff_result *r)
{
	size_t rows = 0, hidden = 0;
	for (size_t k = 0; k < r->nkernels; k++) {
		const struct diff_kernel_stat *s = &r->kernels[k];
		if (!s->diverged && !s->unverified && !s->only_a && !s->only_b)
			continue;
		if (rows == MD_MAX_ROWS) {
			hidden++;
			continue;
		}
		if (!rows++)
			fprintf(f, "| kernel | matched | diverged | unverified | only in A | only in B | first divergence |\n"
				   "|---|---:|---:|---:|---:|---:|---|\n");
		fprintf(f, "| ");
		md_code(f, s->name);
		fprintf(f, " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | ", s->matched,
			s->diverged, s->unverified, s->only_a, s->only_b);
		if (s->diverged)
			fprintf(f, "launch %" PRIu64 ": %s", s->first_seq_a,
				ktrace_diff_class_label(r->divs[s->first_div].cls));
		fprintf(f, " |\n");
	}
	if (hidden)
		fprintf(f, "\n%zu more kernels not shown.\n", hidden);
	if (rows)
		fprintf(f, "\n");
}

static void md_comparison(FILE *f, const struct diff_result *r)
{
	fprintf(f, "### ktrace determinism check: %s\n\n", md_heading(r));
	md_code(f, r->label_a);
	fprintf(f, " vs ");
	md_code(f, r->label_b);
	fprintf(f, ": %" PRIu64 " launches matched (A %" PRIu64 ", B %" PRIu64 "), %" PRIu64 " only in A, %" PRIu64
		   " only in B, %" PRIu64 " unverified, %" PRIu64 " diverged.\n\n",
		r->matched, r->launches_a, r->launches_b, r->only_a, r->only_b, r->unverified, r->diverged);
	if (r->ndivs) {
		md_first_divergence(f, &r->divs[0]);
		md_confirmation(f, r);
	}
	md_kernel_table(f, r);
	for (size_t w = 0; w < r->nwarnings; w++) {
		fprintf(f, "> warning: ");
		md_text(f, r->warnings[w]);
		fprintf(f, "\n");
	}
	if (r->nwarnings)
		fprintf(f, "\n");
	if (r->ndivs) {
		char *txt = divergence_text(&r->divs[0], "first divergence");
		fprintf(f, "<details><summary>Details of the first divergence</summary>\n\n```\n%s```\n\n</details>\n\n",
			txt ? txt : "");
		free(txt);
	}
}

int ktrace_diff_report_markdown(const char *path, const struct diff_result *const *rs, size_t n, char *err,
				size_t errlen)
{
	FILE *f = fopen(path, "a");
	if (!f) {
		snprintf(err, errlen, "%s: cannot write the Markdown summary: %s", path, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		md_comparison(f, rs[i]);
	if (ferror(f) | fclose(f)) {
		snprintf(err, errlen, "%s: error writing the Markdown summary", path);
		return -1;
	}
	return 0;
}
