/* tools/diff/diff_ci.c: the CI reports of a determinism diff.
 *
 * Owns JUnit XML (a testsuite per comparison, a testcase per kernel name),
 * GitHub Actions workflow commands (one annotation per divergent kernel) and
 * the Markdown summary appended to $GITHUB_STEP_SUMMARY.  Each carries what
 * the verdict rests on: digests alone (ktrace-diff: a divergence fails,
 * labelled unconfirmed) or `ktrace check`'s replays (a confirmed kernel
 * fails; digests that differ without confirmation are a skipped test case,
 * a warning); and, as the text and JSON reports do, whether the program's own
 * results (its device-to-host copies) differ, the stream order (region
 * digests set aside for a concurrent writer, possible races) and nothing
 * compared (an error, never a pass).
 */
#include "tools/diff/diff_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Flush and close a report file: 0, or -1 with "<path>: write error: <why>"
 * in err when a write to it failed (why unknown when an earlier write set the
 * error flag and its errno is gone). */
static int close_report(FILE *f, const char *path, char *err, size_t errlen)
{
	int e = 0, failed;

	errno = 0;
	if (fflush(f) != 0)
		e = errno;
	failed = e || ferror(f);
	if (fclose(f) != 0 && !failed) {
		e = errno;
		failed = 1;
	}
	if (!failed)
		return 0;
	if (e)
		snprintf(err, errlen, "%s: write error: %s", path, strerror(e));
	else
		snprintf(err, errlen, "%s: write error", path);
	return -1;
}

/* Render a divergence's text block into a malloc'd string. */
static char *divergence_text(const struct diff_result *r, const struct diff_divergence *d, const char *title)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	ktrace_diff_text_divergence(m, r, d, title);
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
		if (c->v[i].outcome == KTRACE_REPLAY_CONFIRMED && !strcmp(ktrace_tm_kernel_name(c->v[i].launch->look->kernel), name))
			return &c->v[i];
	return NULL;
}

/* A divergent kernel: a failure on digests alone (ktrace-diff), when a
 * replay confirmed it or when a race explains it (verdict race); skipped,
 * with why, when the replays did not confirm it. */
static int diverged_state(const struct diff_result *r, const struct diff_kernel_stat *s, char *msg, size_t cap)
{
	const struct diff_divergence *d = &r->divs[s->first_div];
	const struct diff_confirm *c = kernel_confirmed(r, s->name), *tried = ktrace_diff_confirm_of(r->confirm, d->la);
	char line[400], conf[512];

	ktrace_diff_summary_line(r, d, line, sizeof line);
	if (s->first_div == 0 && ktrace_diff_verdict(r) == DIFF_VERDICT_RACE) {
		ktrace_diff_race_verdict_line(r, msg, cap);
		return TC_FAIL;
	}
	if (!r->confirm) {
		snprintf(msg, cap, "unconfirmed (digests only): %" PRIu64 " of %" PRIu64 " launch%s diverged; first: %s",
			 s->diverged, s->matched, s->matched == 1 ? "" : "es", line);
		return TC_FAIL;
	}
	if (c || tried)
		ktrace_diff_confirm_line(c ? c : tried, conf, sizeof conf);
	else
		snprintf(conf, sizeof conf, "not replayed");
	snprintf(msg, cap, "%s: %" PRIu64 " of %" PRIu64 " launch%s diverged by their digests; first: %s",
		 c ? conf : "digests differ, not confirmed by replay", s->diverged, s->matched, s->matched == 1 ? "" : "es",
		 line);
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
		uint64_t n = s->only_a ? s->only_a : s->only_b;
		snprintf(msg, cap, "only in run %s (%" PRIu64 " launch%s)", s->only_a ? "A" : "B", n, n == 1 ? "" : "es");
		return r->strict ? TC_FAIL : TC_SKIP;
	}
	if (s->unverified == s->matched) {
		if (s->matched == 1)
			snprintf(msg, cap, "not verified: its one launch could not be compared (no hashes)");
		else
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
	if (s->first_div == 0 && ktrace_diff_verdict(r) == DIFF_VERDICT_RACE)
		return "race";
	return ktrace_diff_class_name(r->divs[s->first_div].cls);
}

/* ---- what a comparison says besides its kernels (every format) ------------------------- */

/* The text report's program-results line, without its newline. */
static void results_line(const struct diff_result *r, char *buf, size_t cap)
{
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);

	buf[0] = '\0';
	if (!m)
		return;
	ktrace_diff_text_results(m, r);
	fclose(m);
	if (s)
		snprintf(buf, cap, "%.*s", (int)strcspn(s, "\n"), s);
	free(s);
}

static int order_recorded(const struct diff_result *r)
{
	return r->order_a || r->order_b;
}

/* Test cases besides the kernels': the program's results, the stream order
 * (when recorded), and the comparison itself when nothing was compared. */
enum extra_case { XC_RESULTS, XC_ORDER, XC_COMPARED, XC_COUNT };

static const char *const extra_case_name[XC_COUNT] = {
	"program results (device-to-host copies)", "stream order (possible races)", "comparison",
};

enum { TC_ERROR = TC_SKIP + 1, TC_NONE };

static int extra_case_state(const struct diff_result *r, int which, char *msg, size_t cap)
{
	char none[600];

	msg[0] = '\0';
	switch (which) {
	case XC_RESULTS:
		results_line(r, msg, cap);
		return r->results.state == DIFF_RESULTS_DIFFER ? TC_FAIL :
		       r->results.state == DIFF_RESULTS_IDENTICAL ? TC_PASS : TC_SKIP;
	case XC_ORDER:
		if (!order_recorded(r))
			return TC_NONE;
		ktrace_diff_stream_order_line(r, msg, cap);
		return r->strict && (r->races_a || r->races_b) ? TC_FAIL : TC_PASS;
	default:
		if (ktrace_diff_compared(r))
			return TC_NONE;
		ktrace_diff_none_compared(r->launches_a, r->label_a, r->label_b, none, sizeof none);
		snprintf(msg, cap, "nothing compared: %s (%" PRIu64 " unverified, %" PRIu64
			 " in one run only): an error, not a pass", none, r->unverified, r->only_a + r->only_b);
		return TC_ERROR;
	}
}

struct junit_counts {
	size_t tests, failures, errors, skipped;
};

static void count_case(struct junit_counts *c, int st)
{
	if (st == TC_NONE)
		return;
	c->tests++;
	c->failures += st == TC_FAIL;
	c->errors += st == TC_ERROR;
	c->skipped += st == TC_SKIP;
}

static void junit_count(const struct diff_result *r, struct junit_counts *c)
{
	char msg[1200];

	for (size_t k = 0; k < r->nkernels; k++)
		count_case(c, testcase_state(r, &r->kernels[k], msg, sizeof msg));
	for (int x = 0; x < XC_COUNT; x++)
		count_case(c, extra_case_state(r, x, msg, sizeof msg));
}

/* The figures the JSON report gives, as properties of the test suite. */
static void junit_properties(FILE *f, const struct diff_result *r)
{
	fprintf(f, "    <properties>\n"
		   "      <property name=\"ktrace.result\" value=\"%s\"/>\n"
		   "      <property name=\"ktrace.verdict\" value=\"%s\"/>\n"
		   "      <property name=\"ktrace.exit_code\" value=\"%d\"/>\n"
		   "      <property name=\"ktrace.program_results\" value=\"%s\"/>\n"
		   "      <property name=\"ktrace.program_results_differ\" value=\"%" PRIu64 "\"/>\n",
		ktrace_diff_result_name(r), ktrace_diff_verdict_name(ktrace_diff_verdict(r)), r->status,
		ktrace_diff_results_state_name(r->results.state), r->results.differ);
	if (order_recorded(r))
		fprintf(f, "      <property name=\"ktrace.regions_set_aside\" value=\"%" PRIu64 "\"/>\n"
			   "      <property name=\"ktrace.races_a\" value=\"%" PRIu64 "\"/>\n"
			   "      <property name=\"ktrace.races_b\" value=\"%" PRIu64 "\"/>\n",
			r->set_aside, r->races_a, r->races_b);
	fprintf(f, "    </properties>\n");
}

/* One test case: its element, and for a failure the text that explains it (body). */
static void junit_case(FILE *f, const char *classname, const char *name, int st, const char *type,
		       const char *msg, const char *body)
{
	fprintf(f, "    <testcase classname=\"%s\" name=\"", classname);
	xml_text(f, name);
	if (st == TC_PASS && !body) {
		fprintf(f, "\"/>\n");
		return;
	}
	fprintf(f, "\">\n");
	if (st == TC_SKIP || st == TC_FAIL || st == TC_ERROR) {
		fprintf(f, "      <%s", st == TC_SKIP ? "skipped" : st == TC_FAIL ? "failure" : "error");
		if (st != TC_SKIP)
			fprintf(f, " type=\"%s\"", type);
		fprintf(f, " message=\"");
		xml_text(f, msg);
		if (st == TC_SKIP || !body) {
			fprintf(f, "\"/>\n");
		} else {
			fprintf(f, "\">");
			xml_text(f, body);
			fprintf(f, "</%s>\n", st == TC_FAIL ? "failure" : "error");
		}
	} else {
		fprintf(f, "      <system-out>");
		xml_text(f, body);
		fprintf(f, "</system-out>\n");
	}
	fprintf(f, "    </testcase>\n");
}

/* The possible races listed, one line each (NULL when none). */
static char *races_text(const struct diff_result *r)
{
	char *buf = NULL, line[1024];
	size_t len = 0;
	FILE *m;

	if (!r->nraces || !(m = open_memstream(&buf, &len)))
		return NULL;
	for (size_t i = 0; i < r->nraces; i++) {
		ktrace_diff_race_line(&r->races[i], line, sizeof line);
		fprintf(m, "%s\n", line);
	}
	fclose(m);
	return buf;
}

static void junit_extra_cases(FILE *f, const struct diff_result *r)
{
	static const char *const type[XC_COUNT] = { "program_results_differ", "possible_race", "nothing_compared" };
	static const char *const classname[XC_COUNT] = { "ktrace.program", "ktrace.stream_order", "ktrace.comparison" };
	char msg[1200];

	for (int x = 0; x < XC_COUNT; x++) {
		int st = extra_case_state(r, x, msg, sizeof msg);
		char *body = x == XC_ORDER ? races_text(r) : NULL;

		if (st != TC_NONE)
			junit_case(f, classname[x], extra_case_name[x], st, type[x], msg, body);
		free(body);
	}
}

static void junit_suite(FILE *f, const struct diff_result *r)
{
	struct junit_counts c = { 0 };
	char msg[1200];

	junit_count(r, &c);
	fprintf(f, "  <testsuite name=\"");
	xml_text(f, r->label_a);
	fprintf(f, " vs ");
	xml_text(f, r->label_b);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n", c.tests, c.failures,
		c.errors, c.skipped);
	junit_properties(f, r);
	for (size_t k = 0; k < r->nkernels; k++) {
		const struct diff_kernel_stat *s = &r->kernels[k];
		int st = testcase_state(r, s, msg, sizeof msg);
		char *txt = st == TC_FAIL && s->diverged ? divergence_text(r, &r->divs[s->first_div], "first divergence")
							  : NULL;

		junit_case(f, "ktrace.determinism", s->name, st, failure_type(r, s), msg, st == TC_FAIL ? (txt ? txt : "")
												  : NULL);
		free(txt);
	}
	junit_extra_cases(f, r);
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

int ktrace_diff_report_junit(const char *path, const struct diff_result *const *rs, size_t n, char *err,
			     size_t errlen)
{
	struct junit_counts c = { 0 };
	FILE *f = fopen(path, "w");

	if (!f) {
		snprintf(err, errlen, "%s: cannot write the JUnit report: %s", path, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		junit_count(rs[i], &c);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"ktrace determinism\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
		   "skipped=\"%zu\">\n", c.tests, c.failures, c.errors, c.skipped);
	for (size_t i = 0; i < n; i++)
		junit_suite(f, rs[i]);
	fprintf(f, "</testsuites>\n");
	return close_report(f, path, err, errlen);
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
 * digests alone (ktrace-diff), when a replay confirmed it or when a race
 * explains it (verdict race), a warning when the replays did not confirm it. */
static void gh_divergence(FILE *f, const struct diff_result *r, size_t i)
{
	const struct diff_divergence *d = &r->divs[i];
	const char *name = ktrace_tm_kernel_name(d->la->look->kernel);
	const struct diff_confirm *c = kernel_confirmed(r, name), *tried = ktrace_diff_confirm_of(r->confirm, d->la);
	char title[300], line[600], text[1200], conf[512] = "";
	const char *what = d->cls == DIFF_CLASS_KERNEL_NONDET ? "non-deterministic kernel" :
			   d->cls == DIFF_CLASS_INPUTS_DIFFER ? "divergence (inputs differ)" : "divergence";

	ktrace_diff_summary_line(r, d, line, sizeof line);
	if (c || tried)
		ktrace_diff_confirm_line(c ? c : tried, conf, sizeof conf);
	int race = i == 0 && !c && ktrace_diff_verdict(r) == DIFF_VERDICT_RACE;
	/* titles stay short: long template names are cut */
	if (race)
		snprintf(title, sizeof title, "ktrace: race: %.120s%s reads what another stream writes unordered", name,
			 strlen(name) > 120 ? "..." : "");
	else if (!r->confirm)
		snprintf(title, sizeof title, "ktrace: %s in %.120s%s (unconfirmed: digests only)", what, name,
			 strlen(name) > 120 ? "..." : "");
	else if (c)
		snprintf(title, sizeof title, "ktrace: confirmed non-deterministic kernel %.120s%s", name,
			 strlen(name) > 120 ? "..." : "");
	else
		snprintf(title, sizeof title, "ktrace: digests differ in %.120s%s (not confirmed by replay)", name,
			 strlen(name) > 120 ? "..." : "");
	snprintf(text, sizeof text, "%s%s%s", line, conf[0] ? "; replay: " : "", conf);
	gh_command(f, !r->confirm || c || race ? "error" : "warning", title, text, i == 0 ? " (first divergence)" : "");
}

/* The program's results, when they differ (an error: exit status 1), the
 * stream order's region digests set aside (a notice) and possible races (a
 * warning each, an error with --strict), as the text and JSON reports say. */
static void gh_results_and_order(FILE *f, const struct diff_result *r)
{
	char line[1200];
	int strict_races = r->strict && (r->races_a || r->races_b);

	if (r->results.state == DIFF_RESULTS_DIFFER) {
		results_line(r, line, sizeof line);
		gh_command(f, "error", "ktrace: the program's results differ (device-to-host copies)", line, "");
	}
	if (!order_recorded(r))
		return;
	if (r->set_aside || r->races_a || r->races_b) {
		ktrace_diff_stream_order_line(r, line, sizeof line);
		gh_command(f, "notice", "ktrace stream order", line, "");
	}
	for (size_t i = 0; i < r->nraces && i < GH_MAX_ERRORS; i++) {
		ktrace_diff_race_line(&r->races[i], line, sizeof line);
		gh_command(f, strict_races ? "error" : "warning", "ktrace: possible race", line, "");
	}
	for (size_t i = 0; i < r->nrw && i < GH_MAX_ERRORS; i++) {
		ktrace_diff_rw_race_line(&r->rw[i], line, sizeof line);
		gh_command(f, &r->rw[i] == r->race_first ? "error" : "warning", "ktrace: read/write race", line, "");
	}
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
		const char *name = ktrace_tm_kernel_name(d->la->look->kernel);
		int first_of_kernel = 1;
		for (size_t j = 0; j < i && first_of_kernel; j++)
			first_of_kernel = strcmp(ktrace_tm_kernel_name(r->divs[j].la->look->kernel), name) != 0;
		if (!first_of_kernel)
			continue;
		gh_divergence(f, r, i);
		shown++;
	}
	if (divk > shown) {
		snprintf(line, sizeof line, "%zu more kernel%s diverged; see the full report", divk - shown,
			 divk - shown == 1 ? "" : "s");
		gh_command(f, "notice", "ktrace", line, "");
	}
	gh_results_and_order(f, r);
	for (size_t w = 0; w < r->nwarnings; w++)
		gh_command(f, "warning", "ktrace", r->warnings[w], "");
	if (r->strict && !r->ndivs && r->status == 1 && r->results.state != DIFF_RESULTS_DIFFER) {
		snprintf(line, sizeof line, "--strict: %" PRIu64 " launch%s only in A, %" PRIu64 " only in B, %" PRIu64
			 " unverified", r->only_a, r->only_a == 1 ? "" : "es", r->only_b, r->unverified);
		gh_command(f, "error", "ktrace determinism check", line, "");
	}
	if (!ktrace_diff_compared(r)) {
		char none[400];
		ktrace_diff_none_compared(r->launches_a, "run A", NULL, none, sizeof none);
		snprintf(line, sizeof line, "nothing compared: %s (%" PRIu64 " unverified, %" PRIu64 " in one run only)",
			 none, r->unverified, r->only_a + r->only_b);
		gh_command(f, "error", "ktrace determinism check", line, "");
	} else if (!r->ndivs && r->status == 0) {
		snprintf(line, sizeof line, "no divergence: %" PRIu64 " launch%s compared, %" PRIu64 " unverified",
			 r->matched, r->matched == 1 ? "" : "es", r->unverified);
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
	case DIFF_VERDICT_RACE: return "RACE (a read and a write that nothing orders)";
	default:
		if (r->results.state == DIFF_RESULTS_DIFFER)
			return "PROGRAM RESULTS DIFFER (device-to-host copies)";
		return r->status ? "FAILED (--strict)" : "no divergence";
	}
}

#define MD_MAX_RACES 10

/* The program's results and the stream order, as the text report says them. */
static void md_results_and_order(FILE *f, const struct diff_result *r)
{
	char line[1200];

	results_line(r, line, sizeof line);
	fprintf(f, "- ");
	md_text(f, line);
	fprintf(f, "\n");
	if (order_recorded(r)) {
		ktrace_diff_stream_order_line(r, line, sizeof line);
		fprintf(f, "- ");
		md_text(f, line);
		fprintf(f, "\n");
		for (size_t i = 0; i < r->nraces && i < MD_MAX_RACES; i++) {
			ktrace_diff_race_line(&r->races[i], line, sizeof line);
			fprintf(f, "  - ");
			md_text(f, line);
			fprintf(f, "\n");
		}
		if (r->nraces > MD_MAX_RACES)
			fprintf(f, "  - %zu more possible races listed in the text and JSON reports\n",
				r->nraces - MD_MAX_RACES);
		for (size_t i = 0; i < r->nrw && i < MD_MAX_RACES; i++) {
			ktrace_diff_rw_race_line(&r->rw[i], line, sizeof line);
			fprintf(f, "  - read/write race: ");
			md_text(f, line);
			fprintf(f, "\n");
		}
	}
	fprintf(f, "\n");
}

static void md_first_divergence(FILE *f, const struct diff_divergence *d)
{
	fprintf(f, "**First divergence:** ");
	md_code(f, ktrace_tm_kernel_name(d->la->look->kernel));
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
		if (d->equal_carried)
			fprintf(f, "%zu of the identical inputs are so by a carried pre-digest (the last writer's "
				   "post-digest, not measured before this launch; `KTRACE_HASH_VERIFY=1` measures it too).\n\n",
				d->equal_carried);
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
		md_code(f, ktrace_tm_kernel_name(c->v[i].launch->look->kernel));
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
		fprintf(f, "\n%zu more kernel%s not shown.\n", hidden, hidden == 1 ? "" : "s");
	if (rows)
		fprintf(f, "\n");
}

static void md_comparison(FILE *f, const struct diff_result *r)
{
	fprintf(f, "### ktrace determinism check: %s\n\n", md_heading(r));
	md_code(f, r->label_a);
	fprintf(f, " vs ");
	md_code(f, r->label_b);
	fprintf(f, ": %" PRIu64 " launch%s matched (A %" PRIu64 ", B %" PRIu64 "), %" PRIu64 " only in A, %" PRIu64
		   " only in B, %" PRIu64 " unverified, %" PRIu64 " diverged.\n\n",
		r->matched, r->matched == 1 ? "" : "es", r->launches_a, r->launches_b, r->only_a, r->only_b, r->unverified,
		r->diverged);
	md_results_and_order(f, r);
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
		char *txt = divergence_text(r, &r->divs[0], "first divergence");
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
	return close_report(f, path, err, errlen);
}
