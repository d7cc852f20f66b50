/* tools/diff/diff_main.c: ktrace-diff, the command line of the determinism diff.
 *
 *   ktrace-diff [options] A.ktrace B.ktrace
 *
 * Exit status: 0 no divergence, 1 diverged (by digests alone: the report
 * labels it unconfirmed), 2 error (one line on stderr), nothing compared
 * included.
 */
#include <stdlib.h>
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

/* Read the options into *c; -1 to go on (the traces are argv[optind..]), else the exit status. */
static int parse_options(int argc, char **argv, struct diff_cli *c)
{
	enum { OPT_VERSION = 0x100 };
	static const struct option help_option[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct option longopts[16];
	char err[1024];
	int code;

	memset(c, 0, sizeof *c);
	if (ktrace_cli_join(longopts, 16, ktrace_diff_report_options, ktrace_diff_quiet_option, help_option,
			    NULL) < 0)
		return ktrace_cli_fail("ktrace-diff", "too many options (internal error)");
	ktrace_cli_begin();
	while ((code = ktrace_cli_next(argc, argv, ":h", longopts, err, sizeof err)) != -1) {
		if (code == 'h') {
			usage(stdout);
			return 0;
		}
		if (code == OPT_VERSION) {
			printf("ktrace-diff %s\n", KTRACE_VERSION);
			return 0;
		}
		if (code == '?')
			return ktrace_cli_usage_error("ktrace-diff", err);
		if (ktrace_diff_cli_opt(c, code, optarg, err, sizeof err) < 0)
			return ktrace_cli_fail("ktrace-diff", err);
	}
	if (argc - optind > 2) {
		snprintf(err, sizeof err, "too many files ('%.900s'): give exactly two traces", argv[optind + 2]);
		return ktrace_cli_usage_error("ktrace-diff", err);
	}
	if (argc - optind < 2)
		return ktrace_cli_usage_error("ktrace-diff", "give two traces to compare");
	if (!strcmp(argv[optind], "-") && !strcmp(argv[optind + 1], "-"))
		return ktrace_cli_fail("ktrace-diff", "'-' given twice: standard input is one trace");
	return -1;
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

int main(int argc, char **argv)
{
	struct diff_cli c;
	int status = parse_options(argc, argv, &c);

	if (status < 0)
		status = compare_files(&c, argv[optind], argv[optind + 1]);
	/* a report that could not be written was said by compare_files (status 2) */
	if (status != 2 && ktrace_cli_stdout_status("ktrace-diff"))
		status = 2;
	return status;
}
