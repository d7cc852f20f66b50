/* tools/diff/diff_main.c: ktrace-diff, the command line of the determinism diff.
 *
 *   ktrace-diff [options] A.ktrace B.ktrace
 *
 * Exit status: 0 no divergence, 1 diverged (by digests alone: the report
 * labels it unconfirmed), 2 error (one line on stderr), nothing compared
 * included.
 */
#include <string.h>

#include "tools/cli/cli_options.h"
#include "tools/diff/diff_internal.h"

static void usage(FILE *f)
{
	fputs("usage: ktrace-diff [options] A.ktrace B.ktrace\n"
	      "Compare two traces of the same program launch by launch and report the first\n"
	      "kernel whose output differs, and whether its inputs were identical (the kernel\n"
	      "is non-deterministic) or not (naming the input and its last writer in each\n"
	      "run).  The verdict rests on digests alone: the report labels a divergence\n"
	      "unconfirmed (`ktrace check` confirms one by replaying the launch).\n"
	      "\n"
	      "report options:\n",
	      f);
	ktrace_diff_cli_help(f, 0);
	fputs("\n"
	      "options:\n"
	      "  -h, --help          this text\n"
	      "  --version           print the version\n"
	      "\n"
	      "Exit status: 0 no divergence, 1 diverged, 2 error (nothing compared is one).\n",
	      f);
}

static int diff_option(void *ctx, int code, const char *value, char *err, size_t errlen)
{
	return ktrace_diff_cli_opt(ctx, code, value, err, errlen) < 0 ? -1 : 0;
}

/* Compare the traces a and b and report: the exit status. */
static int compare_files(const struct diff_cli *c, const char *a, const char *b)
{
	struct tm_trace ta, tb;
	struct diff_result r;
	char err[1024];
	int status = 2;

	if (ktrace_tm_load(&ta, a, c->o.allow_truncated, err, sizeof err))
		return ktrace_cli_fail("ktrace-diff", err);
	if (ktrace_tm_load(&tb, b, c->o.allow_truncated, err, sizeof err)) {
		ktrace_tm_free(&ta);
		return ktrace_cli_fail("ktrace-diff", err);
	}
	if (ktrace_diff_compare(&ta, &tb, &c->o, &r, err, sizeof err)) {
		fprintf(stderr, "ktrace-diff: %s\n", err);
	} else {
		const struct diff_result *rs[1] = { &r };
		if (ktrace_diff_cli_report(c, rs, 1, stdout, err, sizeof err))
			fprintf(stderr, "ktrace-diff: %s\n", err);
		else
			status = r.status;
		if (status == 2 && !ktrace_diff_compared(&r)) {
			char none[1200];
			ktrace_diff_none_compared(r.launches_a, a, b, none, sizeof none);
			fprintf(stderr, "ktrace-diff: nothing compared: %s\n", none);
		}
		ktrace_diff_result_free(&r);
	}
	ktrace_tm_free(&ta);
	ktrace_tm_free(&tb);
	return status;
}

/* The two traces: the exit status. */
static int diff_files(void *ctx, int argc, char **argv)
{
	char err[1024];

	if (argc > 2) {
		snprintf(err, sizeof err, "too many files ('%.900s'): give exactly two traces", argv[2]);
		return ktrace_cli_usage_error("ktrace-diff", err);
	}
	if (argc < 2)
		return ktrace_cli_usage_error("ktrace-diff", "give two traces to compare");
	if (!strcmp(argv[0], "-") && !strcmp(argv[1], "-"))
		return ktrace_cli_fail("ktrace-diff", "'-' given twice: standard input is one trace");
	/* a report that could not be written is said by compare_files (status 2) */
	return compare_files(ctx, argv[0], argv[1]);
}

static const struct option *const diff_option_tables[] = { ktrace_diff_report_options,
							   ktrace_diff_quiet_option, ktrace_cli_help_options,
							   NULL };
static const struct ktrace_cli_tool diff_tool = {
	.name = "ktrace-diff", .version = "ktrace-diff " KTRACE_VERSION, .usage = usage, .shortopts = ":h",
	.options = diff_option_tables, .option = diff_option, .run = diff_files,
};

KTRACE_CLI_MAIN(main, diff_tool, struct diff_cli)
