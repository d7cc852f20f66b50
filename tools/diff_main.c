/* tools/diff_main.c: ktrace-diff, the command line of the determinism diff.
 *
 *   ktrace-diff [options] A.ktrace B.ktrace
 *
 * Exit status: 0 no divergence, 1 diverged, 2 error (one line on stderr).
 */
#include <stdlib.h>
#include <string.h>

#include "tools/diff.h"

static void usage(FILE *f)
{
	fputs("usage: ktrace-diff [options] A.ktrace B.ktrace\n"
	      "Compare two traces of the same program launch by launch and report the first\n"
	      "kernel whose output differs, and whether its inputs were identical (the kernel\n"
	      "is non-deterministic) or not (naming the input and its last writer in each run).\n"
	      "\n"
	      "options:\n",
	      f);
	ktrace_diff_cli_help(f);
	fputs("  -h, --help        this text\n"
	      "\n"
	      "exit status: 0 no divergence, 1 diverged, 2 error\n",
	      f);
}

int main(int argc, char **argv)
{
	struct diff_cli c;
	const char *files[2];
	int nfiles = 0, only_files = 0;
	char err[1024];
	memset(&c, 0, sizeof c);
	for (int i = 1; i < argc;) {
		const char *a = argv[i];
		if (!only_files && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			usage(stdout);
			return 0;
		}
		if (!only_files && !strcmp(a, "--")) {
			only_files = 1;
			i++;
			continue;
		}
		if (!only_files && a[0] == '-' && a[1]) {
			int rc = ktrace_diff_cli_arg(&c, argc, argv, &i, err, sizeof err);
			if (rc < 0) {
				fprintf(stderr, "ktrace-diff: %s\n", err);
				return 2;
			}
			if (rc == 0) {
				fprintf(stderr, "ktrace-diff: unknown option '%s' (see ktrace-diff --help)\n", a);
				return 2;
			}
			continue;
		}
		if (nfiles == 2) {
			fprintf(stderr, "ktrace-diff: too many files ('%s'): give exactly two traces\n", a);
			return 2;
		}
		files[nfiles++] = a;
		i++;
	}
	if (nfiles != 2) {
		fprintf(stderr, "ktrace-diff: give two traces to compare (see ktrace-diff --help)\n");
		return 2;
	}
	struct tm_trace ta, tb;
	if (ktrace_tm_load(&ta, files[0], c.o.allow_truncated, err, sizeof err)) {
		fprintf(stderr, "ktrace-diff: %s\n", err);
		return 2;
	}
	if (ktrace_tm_load(&tb, files[1], c.o.allow_truncated, err, sizeof err)) {
		fprintf(stderr, "ktrace-diff: %s\n", err);
		ktrace_tm_free(&ta);
		return 2;
	}
	struct diff_result r;
	int status = 2;
	if (ktrace_diff_compare(&ta, &tb, &c.o, &r, err, sizeof err)) {
		fprintf(stderr, "ktrace-diff: %s\n", err);
	} else {
		const struct diff_result *rs[1] = { &r };
		if (ktrace_diff_cli_report(&c, rs, 1, stdout, err, sizeof err))
			fprintf(stderr, "ktrace-diff: %s\n", err);
		else
			status = r.status;
		ktrace_diff_result_free(&r);
	}
	ktrace_tm_free(&ta);
	ktrace_tm_free(&tb);
	if (fflush(stdout) != 0 && status != 2) {
		fprintf(stderr, "ktrace-diff: error writing the report to stdout\n");
		status = 2;
	}
	return status;
}
