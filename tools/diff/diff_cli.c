/* tools/diff/diff_cli.c: the diff options (getopt_long tables and what each sets)
 * and the report dispatch, shared by ktrace-diff and `ktrace check`.
 */
#include "tools/diff/diff_internal.h"

#include <errno.h>
#include <string.h>

#include "tools/cli/cli_options.h"
#include "tools/model/json_writer.h"

const struct option ktrace_diff_report_options[] = {
	KTRACE_CLI_FLAG("all", DIFF_OPT_ALL), KTRACE_CLI_FLAG("json", DIFF_OPT_JSON),
	KTRACE_CLI_ARG("junit", DIFF_OPT_JUNIT), KTRACE_CLI_FLAG("github", DIFF_OPT_GITHUB),
	KTRACE_CLI_ARG("markdown", DIFF_OPT_MARKDOWN), KTRACE_CLI_FLAG("strict", DIFF_OPT_STRICT),
	KTRACE_CLI_FLAG("partial", DIFF_OPT_PARTIAL), KTRACE_CLI_ARG("perfetto", DIFF_OPT_PERFETTO),
	KTRACE_CLI_END,
};

const struct option ktrace_diff_quiet_option[] = { KTRACE_CLI_FLAG("quiet", DIFF_OPT_QUIET), KTRACE_CLI_END };

/* A report file option: the value is a file name. */
static int set_report_file(const char **slot, const char *option, const char *value, char *err, size_t errlen)
{
	if (!*value) {
		snprintf(err, errlen, "%s needs a file name", option);
		return -1;
	}
	*slot = value;
	return 1;
}

int ktrace_diff_cli_opt(struct diff_cli *c, int code, const char *value, char *err, size_t errlen)
{
	switch (code) {
	case DIFF_OPT_ALL: return ktrace_cli_set_flag(&c->o.all);
	case DIFF_OPT_STRICT: return ktrace_cli_set_flag(&c->o.strict);
	case DIFF_OPT_PARTIAL: return ktrace_cli_set_flag(&c->o.allow_truncated);
	case DIFF_OPT_JSON: return ktrace_cli_set_flag(&c->json);
	case DIFF_OPT_GITHUB: return ktrace_cli_set_flag(&c->github);
	case DIFF_OPT_QUIET: return ktrace_cli_set_flag(&c->quiet);
	case DIFF_OPT_JUNIT: return set_report_file(&c->junit, "--junit", value, err, errlen);
	case DIFF_OPT_MARKDOWN: return set_report_file(&c->markdown, "--markdown", value, err, errlen);
	case DIFF_OPT_PERFETTO: return set_report_file(&c->perfetto, "--perfetto", value, err, errlen);
	default: return 0;
	}
}

void ktrace_diff_cli_help(FILE *f, int for_check)
{
	fputs("  --all               report every divergence (default: the first) and count\n"
	      "                      all kernels\n"
	      "  --json              print the report as JSON instead of text (docs/json.md)\n",
	      f);
	if (for_check)
		fputs("                      (the command's own stdout then goes to stderr, so\n"
		      "                      stdout is JSON only)\n",
		      f);
	fputs("  --junit FILE        also write a JUnit XML report: a test case per kernel\n"
	      "  --github            also print GitHub Actions annotations (::error ...);\n"
	      "                      on stderr with --json\n"
	      "  --markdown FILE     also append a Markdown summary to FILE\n"
	      "                      (e.g. $GITHUB_STEP_SUMMARY)\n"
	      "  --strict            launches found in one run only, not hashed, or in a\n"
	      "                      possible race, and CUDA graphs not traced in full also\n"
	      "                      fail\n"
	      "  --partial           accept truncated traces (crashed runs): compare what was\n"
	      "                      written\n"
	      "  --perfetto FILE     also write run A's timeline (Chrome trace-event JSON, for\n"
	      "                      Perfetto) with its divergent launches marked, the first\n"
	      "                      highlighted\n",
	      f);
	if (!for_check)
		fputs("  --quiet             print no text report (exit status and report files only)\n", f);
}

/* ktrace check --json: one object whatever the number of runs (docs/json.md). */
static void check_json(const struct diff_cli *c, const struct diff_result *const *rs, size_t n, FILE *out)
{
	struct json_writer w;

	ktrace_json_init(&w, out, JSON_INDENTED);
	ktrace_json_object(&w, NULL);
	ktrace_json_i64(&w, "runs", c->check_runs);
	ktrace_json_i64(&w, "exit_code", c->check_status);
	ktrace_json_array(&w, "comparisons");
	for (size_t i = 0; i < n; i++)
		ktrace_diff_json(&w, rs[i], &c->o);
	ktrace_json_end(&w);
	ktrace_json_end(&w);
	fputc('\n', out);
}

int ktrace_diff_cli_report(const struct diff_cli *c, const struct diff_result *const *rs, size_t n, FILE *out,
			   char *err, size_t errlen)
{
	if (c->json && !c->quiet && !c->check_runs) {
		for (size_t i = 0; i < n; i++) {
			ktrace_diff_report_json(out, rs[i], &c->o);
			fprintf(out, "\n");
		}
	} else if (c->json && !c->quiet) {
		check_json(c, rs, n, out);
	} else if (!c->quiet) {
		for (size_t i = 0; i < n; i++) {
			if (i)
				fprintf(out, "\n");
			ktrace_diff_report_text(out, rs[i], &c->o);
		}
	}
	if (c->github)
		for (size_t i = 0; i < n; i++)
			ktrace_diff_report_github(c->json ? stderr : out, rs[i], &c->o);
	errno = 0;
	int out_errno = fflush(out) != 0 ? errno : 0;
	int out_failed = out_errno || ferror(out);
	if (c->junit && ktrace_diff_report_junit(c->junit, rs, n, err, errlen))
		return -1;
	if (c->markdown && ktrace_diff_report_markdown(c->markdown, rs, n, err, errlen))
		return -1;
	if (c->perfetto && n && ktrace_diff_write_timeline(c->perfetto, rs[0], err, errlen))
		return -1;
	if (out_failed) {
		/* why is unknown when an earlier write set the error flag and its errno is gone */
		const char *name = out == stdout ? "stdout" : "the report";
		if (out_errno)
			snprintf(err, errlen, "%s: write error: %s", name, strerror(out_errno));
		else
			snprintf(err, errlen, "%s: write error", name);
		return -1;
	}
	return 0;
}
