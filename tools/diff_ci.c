/* tools/diff_ci.c: the CI reports of a determinism diff.
 *
 * Owns JUnit XML (a testsuite per comparison, a testcase per kernel name),
 * GitHub Actions workflow commands (::error annotations, one per divergent
 * kernel) and the Markdown summary appended to $GITHUB_STEP_SUMMARY.
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

static int testcase_state(const struct diff_result *r, const struct diff_kernel_stat *s, char *msg, size_t cap)
{
	if (s->diverged) {
		char line[400];
		ktrace_diff_summary_line(&r->divs[s->first_div], line, sizeof line);
		snprintf(msg, cap, "%" PRIu64 " of %" PRIu64 " launches diverged; first: %s", s->diverged, s->matched,
			 line);
		return TC_FAIL;
	}
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

int ktrace_diff_report_junit(const char *path, const struct diff_result *const *rs, size_t n, char *err,
			     size_t errlen)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: cannot write the JUnit report: %s", path, strerror(errno));
		return -1;
	}
	size_t tests = 0, fails = 0, skips = 0;
	char msg[600];
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
				const char *type = s->diverged ? ktrace_diff_class_name(r->divs[s->first_div].cls) : "strict";
				fprintf(f, "      <failure type=\"%s\" message=\"", type);
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

void ktrace_diff_report_github(FILE *f, const struct diff_result *r, const struct diff_opts *o)
{
	size_t shown = 0, divk = 0;
	char title[300], line[600];
	(void)o;
	for (size_t k = 0; k < r->nkernels; k++)
		divk += r->kernels[k].diverged != 0;
	/* one error per divergent kernel, in the order of their first divergence */
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
		/* titles stay short: long template names are cut */
		snprintf(title, sizeof title, "ktrace: %s in %.120s%s",
			 d->cls == DIFF_CLASS_KERNEL_NONDET ? "non-deterministic kernel" :
			 d->cls == DIFF_CLASS_INPUTS_DIFFER ? "divergence (inputs differ)" : "divergence",
			 name, strlen(name) > 120 ? "..." : "");
		ktrace_diff_summary_line(d, line, sizeof line);
		fputs("::error title=", f);
		gh_escape(f, title, 1);
		fputs("::", f);
		gh_escape(f, line, 0);
		fputs(i == 0 ? " (first divergence)\n" : "\n", f);
		shown++;
	}
	if (divk > shown) {
		snprintf(line, sizeof line, "%zu more kernels diverged; see the full report", divk - shown);
		fputs("::notice title=ktrace::", f);
		gh_escape(f, line, 0);
		fputc('\n', f);
	}
	for (size_t w = 0; w < r->nwarnings; w++) {
		fputs("::warning title=ktrace::", f);
		gh_escape(f, r->warnings[w], 0);
		fputc('\n', f);
	}
	if (r->strict && !r->ndivs && r->status) {
		snprintf(line, sizeof line, "--strict: %" PRIu64 " launches only in A, %" PRIu64 " only in B, %" PRIu64
			 " unverified", r->only_a, r->only_b, r->unverified);
		fputs("::error title=ktrace determinism check::", f);
		gh_escape(f, line, 0);
		fputc('\n', f);
	}
	if (!r->ndivs) {
		snprintf(line, sizeof line, "no divergence: %" PRIu64 " launches compared, %" PRIu64 " unverified",
			 r->matched, r->unverified);
		fputs("::notice title=ktrace determinism check::", f);
		gh_escape(f, line, 0);
		fputc('\n', f);
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

static void md_comparison(FILE *f, const struct diff_result *r)
{
	fprintf(f, "### ktrace determinism check: %s\n\n",
		r->ndivs ? "DIVERGED" : r->status ? "FAILED (--strict)" : "no divergence");
	md_code(f, r->label_a);
	fprintf(f, " vs ");
	md_code(f, r->label_b);
	fprintf(f, ": %" PRIu64 " launches matched (A %" PRIu64 ", B %" PRIu64 "), %" PRIu64 " only in A, %" PRIu64
		   " only in B, %" PRIu64 " unverified, %" PRIu64 " diverged.\n\n",
		r->matched, r->launches_a, r->launches_b, r->only_a, r->only_b, r->unverified, r->diverged);
	if (r->ndivs) {
		const struct diff_divergence *d = &r->divs[0];
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
