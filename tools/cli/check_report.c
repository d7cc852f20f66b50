/* tools/cli/check_report.c: the reports of a `ktrace check` that failed before it compared
 * anything (exit status 2: a run failed, left no trace, no CUDA driver...).
 *
 * Every report option still gives its report, saying what failed, so that a CI job
 * that reads them sees the error rather than nothing: --json the check's object with
 * an "error" field and no comparisons (docs/json.md), --github one ::error annotation,
 * --junit a suite whose one test case is an <error type="check_failed">, --markdown a
 * section appended to the file.  The reports of a check that compared runs are
 * tools/diff_cli.c's.
 */
#include "tools/cli/ktrace_cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/model/diff.h"
#include "tools/model/json_writer.h"

/* a workflow command's title: no ':' or ',' (they would need escaping) */
#define CHECK_FAILED_TITLE "ktrace check failed (exit status 2)"

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\n': fputs("&#10;", f); break;
		default: fputc(c < 0x20 && c != '\t' ? ' ' : c, f);
		}
	}
}

/* GitHub workflow command data: %, CR and LF escaped. */
static void gh_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '%')
			fputs("%25", f);
		else if (*s == '\r')
			fputs("%0D", f);
		else if (*s == '\n')
			fputs("%0A", f);
		else
			fputc(*s, f);
	}
}

/* The last line of text (no newline at the end). */
static void last_line(const char *text, char *out, size_t cap)
{
	size_t n = strlen(text);
	const char *start;

	while (n && text[n - 1] == '\n')
		n--;
	start = text + n;
	while (start > text && start[-1] != '\n')
		start--;
	n -= (size_t)(start - text);
	snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), start);
}

/* The length of errors without the newlines at its end. */
static size_t text_len(const char *errors)
{
	size_t n = strlen(errors);

	while (n && errors[n - 1] == '\n')
		n--;
	return n;
}

/* --json: the check's object, with its error and no comparison. */
static void json_error(FILE *out, int runs, const char *errors)
{
	struct json_writer w;

	ktrace_json_init(&w, out, JSON_INDENTED);
	ktrace_json_object(&w, NULL);
	ktrace_json_i64(&w, "runs", runs);
	ktrace_json_i64(&w, "exit_code", 2);
	ktrace_json_str(&w, "error", errors);
	ktrace_json_array(&w, "comparisons");
	ktrace_json_end(&w);
	ktrace_json_end(&w);
	fputc('\n', out);
}

static int close_report(FILE *f, const char *path, const char *what, char *err, size_t errlen)
{
	int failed = fflush(f) != 0 || ferror(f), e = errno;

	if (fclose(f) != 0 && !failed) {
		failed = 1;
		e = errno;
	}
	if (failed)
		snprintf(err, errlen, "%s: cannot write the %s: %s", path, what, strerror(e));
	return failed ? -1 : 0;
}

/* errors: the error lines, without a newline at the end (also below). */
static int junit_error(const char *path, const char *cmdline, const char *errors, char *err, size_t errlen)
{
	char message[1024];
	FILE *f = fopen(path, "w");

	if (!f) {
		snprintf(err, errlen, "%s: cannot write the JUnit report: %s", path, strerror(errno));
		return -1;
	}
	last_line(errors, message, sizeof message);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<testsuites name=\"ktrace determinism\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
		   "  <testsuite name=\"ktrace check\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
		   "    <properties>\n"
		   "      <property name=\"ktrace.result\" value=\"error\"/>\n"
		   "      <property name=\"ktrace.exit_code\" value=\"2\"/>\n"
		   "    </properties>\n"
		   "    <testcase classname=\"ktrace.check\" name=\"");
	xml_text(f, cmdline);
	fprintf(f, "\">\n      <error type=\"check_failed\" message=\"");
	xml_text(f, message);
	fprintf(f, "\">");
	xml_text(f, errors);
	fprintf(f, "</error>\n    </testcase>\n  </testsuite>\n</testsuites>\n");
	return close_report(f, path, "JUnit report", err, errlen);
}

static int markdown_error(const char *path, const char *cmdline, const char *errors, char *err, size_t errlen)
{
	FILE *f = fopen(path, "a");

	if (!f) {
		snprintf(err, errlen, "%s: cannot write the Markdown summary: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "### ktrace determinism check: ERROR (exit status 2, nothing compared)\n\n```\n$ ktrace check -- ");
	/* in a fenced block only a line of backticks would end it: none is written */
	for (const char *s = cmdline; *s; s++)
		fputc(*s == '`' ? '\'' : *s == '\n' ? ' ' : *s, f);
	fprintf(f, "\n");
	for (const char *s = errors; *s; s++)
		fputc(*s == '`' ? '\'' : *s, f);
	fprintf(f, "\n```\n\n");
	return close_report(f, path, "Markdown summary", err, errlen);
}

int ktrace_check_error_report(const struct diff_cli *c, int runs, const char *cmdline, const char *errors,
			      FILE *out, char *err, size_t errlen)
{
	size_t n = text_len(errors);
	char *text = strndup(errors, n);
	int rc = 0;

	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (c->json)
		json_error(out, runs, text);
	if (c->github) {
		FILE *g = c->json ? stderr : out;

		fprintf(g, "::error title=%s::", CHECK_FAILED_TITLE);
		gh_text(g, text);
		fputc('\n', g);
	}
	fflush(out);
	if (c->junit && junit_error(c->junit, cmdline, text, err, errlen))
		rc = -1;
	else if (c->markdown && markdown_error(c->markdown, cmdline, text, err, errlen))
		rc = -1;
	free(text);
	return rc;
}
