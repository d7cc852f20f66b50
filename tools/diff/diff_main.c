/* tools/diff/diff_main.c: ktrace-diff, the command line of the determinism diff.
 *
 *   ktrace-diff [options] A.ktrace B.ktrace
 *   ktrace-diff [options] RUN_A_DIR RUN_B_DIR              (two runs of a job)
 *   ktrace-diff [options] A_TRACE... -- B_TRACE...        (the same, as lists)
 *
 * Two trace files are compared as two runs of one process; two directories
 * of per-rank traces, or two lists of traces separated by "--", as two runs
 * of a distributed job (model/job_diff.h).  The "--" between the lists is
 * found before the options are read (getopt_long would take it for the end
 * of the options and drop it): the first "--" after an operand.
 *
 * Exit status: 0 no divergence, 1 diverged (by digests alone: the report
 * labels it unconfirmed) or a finding about a job's ranks, 2 error (one
 * line on stderr), nothing compared included.
 */
#include <string.h>
#include <sys/stat.h>

#include "tools/cli/cli_options.h"
#include "tools/diff/diff_internal.h"
#include "tools/model/job_diff.h"

static void usage(FILE *f)
{
	fputs("usage: ktrace-diff [options] A.ktrace B.ktrace\n"
	      "       ktrace-diff [options] RUN_A_DIR RUN_B_DIR\n"
	      "       ktrace-diff [options] A_TRACE... -- B_TRACE...\n"
	      "Compare two traces of the same program launch by launch and report the first\n"
	      "kernel whose output differs, and whether its inputs were identical (the kernel\n"
	      "is non-deterministic) or not (naming the input and its last writer in each\n"
	      "run).  The verdict rests on digests alone: the report labels a divergence\n"
	      "unconfirmed (`ktrace check` confirms one by replaying the launch).\n"
	      "\n"
	      "Two runs of a distributed job: two directories of per-rank traces (searched\n"
	      "4 levels deep: traces gathered from several hosts), or two lists of traces\n"
	      "separated by --.  Rank k of run A is compared with rank k of run B (the rank\n"
	      "of the JOB record, else of the header), the ranks' NCCL operations are matched\n"
	      "across ranks, and one verdict names the first divergence in causal order: the\n"
	      "culprit rank and kernel (or a collective whose inputs were identical on every\n"
	      "rank), every other rank's first divergence explained by the operation it came\n"
	      "through.  Ranks missing, cut short or issuing other collectives are findings.\n"
	      "\n"
	      "report options:\n",
	      f);
	ktrace_diff_cli_help(f, 0);
	fputs("\n"
	      "options:\n"
	      "  -h, --help          this text\n"
	      "  --version           print the version\n"
	      "\n"
	      "Exit status: 0 no divergence, 1 diverged (a job: or its ranks differ), 2 error\n"
	      "(nothing compared is one; a job: runs of different sizes, a trace unreadable).\n",
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
	/* a trace against itself, or a copy of it: loaded once; else beside it,
	 * sharing the launches' regions and parameter bytes that are the same */
	if (ktrace_tm_load_second(&tb, b, &ta, c->o.allow_truncated, err, sizeof err)) {
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
	ktrace_tm_free(&tb);
	ktrace_tm_free(&ta);
	return status;
}

/* ---- two runs of a job --------------------------------------------------- */

/* What argv's "--" between run A's traces and run B's becomes: an operand
 * getopt_long leaves in place, recognised by its address. */
static char run_separator[] = "(the -- between the runs)";

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The report options that do not apply to a job's verdict. */
static int job_options_ok(const struct diff_cli *c)
{
	const char *opt = c->junit ? "--junit" : c->markdown ? "--markdown" : c->github ? "--github" :
			  c->perfetto ? "--perfetto" : NULL;
	char err[256];

	if (!opt)
		return 1;
	snprintf(err, sizeof err, "%s is for two traces: compare one rank's (ktrace-diff A.ktrace B.ktrace) for it",
		 opt);
	ktrace_cli_fail("ktrace-diff", err);
	return 0;
}

/* Compare the runs pa[0..na) and pb[0..nb), labelled la and lb: the exit status. */
static int compare_job(const struct diff_cli *c, const char *const *pa, size_t na, const char *const *pb, size_t nb,
		       const char *la, const char *lb)
{
	struct job_diff_opts o = { .diff = c->o, .label_a = la, .label_b = lb };
	struct job_result r;
	char err[1024];

	if (ktrace_job_diff(pa, na, pb, nb, &o, &r, err, sizeof err))
		return ktrace_cli_fail("ktrace-diff", err);
	if (c->json && !c->quiet)
		ktrace_job_report_json(stdout, &r, NULL);
	else if (!c->quiet)
		ktrace_job_report_text(stdout, &r, NULL);
	ktrace_cli_flush_stdout();
	for (size_t i = 0; i < r.nfindings; i++)
		if (r.findings[i].exit_code == 2)
			fprintf(stderr, "ktrace-diff: %s\n", r.findings[i].text);
	int status = r.status;
	ktrace_job_result_free(&r);
	return status;
}

/* Two run directories: every trace under each. */
static int compare_dirs(const struct diff_cli *c, const char *a, const char *b)
{
	char **pa = NULL, **pb = NULL, err[1024];
	size_t na = 0, nb = 0;
	int status;

	if (ktrace_job_list_dir(a, &pa, &na, err, sizeof err) || ktrace_job_list_dir(b, &pb, &nb, err, sizeof err)) {
		ktrace_job_paths_free(pa, na);
		return ktrace_cli_fail("ktrace-diff", err);
	}
	if (!na || !nb) {
		snprintf(err, sizeof err, "%s holds no trace (*.ktrace)", na ? b : a);
		status = ktrace_cli_fail("ktrace-diff", err);
	} else {
		status = compare_job(c, (const char *const *)pa, na, (const char *const *)pb, nb, a, b);
	}
	ktrace_job_paths_free(pa, na);
	ktrace_job_paths_free(pb, nb);
	return status;
}

/* Two lists of traces, argv[0..sep) and argv[sep + 1..argc). */
static int compare_lists(const struct diff_cli *c, int argc, char **argv, int sep)
{
	char la[160], lb[160];

	if (sep == 0 || sep == argc - 1)
		return ktrace_cli_usage_error("ktrace-diff", "give run A's traces before -- and run B's after it");
	for (int i = 0; i < argc; i++)
		if (i != sep && is_dir(argv[i])) {
			char err[4200];
			snprintf(err, sizeof err, "'%.4000s' is a directory: give two run directories, or lists of traces",
				 argv[i]);
			return ktrace_cli_usage_error("ktrace-diff", err);
		}
	snprintf(la, sizeof la, "%d trace%s before --", sep, sep == 1 ? "" : "s");
	snprintf(lb, sizeof lb, "%d trace%s after --", argc - sep - 1, argc - sep - 1 == 1 ? "" : "s");
	return compare_job(c, (const char *const *)argv, (size_t)sep, (const char *const *)argv + sep + 1,
			   (size_t)(argc - sep - 1), la, lb);
}

/* ---- the operands ---------------------------------------------------------- */

/* The traces or runs: the exit status. */
static int diff_files(void *ctx, int argc, char **argv)
{
	char err[1024];

	for (int i = 0; i < argc; i++)
		if (argv[i] == run_separator)
			return job_options_ok(ctx) ? compare_lists(ctx, argc, argv, i) : 2;
	if (argc > 2) {
		snprintf(err, sizeof err, "too many files ('%.900s'): give exactly two traces, two run directories, "
			 "or two lists of traces separated by --", argv[2]);
		return ktrace_cli_usage_error("ktrace-diff", err);
	}
	if (argc < 2)
		return ktrace_cli_usage_error("ktrace-diff", "give two traces to compare");
	if (is_dir(argv[0]) || is_dir(argv[1])) {
		if (!is_dir(argv[0]) || !is_dir(argv[1]))
			return ktrace_cli_usage_error("ktrace-diff", "give two traces or two run directories, not one "
								      "of each");
		return job_options_ok(ctx) ? compare_dirs(ctx, argv[0], argv[1]) : 2;
	}
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

/* Whether the option argv[i] ("--name", "--name=value", "-h") takes the next
 * argument as its value: a long option of the tables (as typed, or a prefix
 * of one name only) that requires a value and has none after '='. */
static int takes_next(const char *arg)
{
	const struct option *found = NULL;
	size_t len = strcspn(arg + 2, "=");
	int matches = 0;

	if (strncmp(arg, "--", 2) || arg[2 + len] == '=')
		return 0;
	for (const struct option *const *t = diff_option_tables; *t; t++)
		for (const struct option *o = *t; o->name; o++) {
			if (strncmp(o->name, arg + 2, len))
				continue;
			if (strlen(o->name) == len)
				return o->has_arg == required_argument;
			found = o;
			matches++;
		}
	return matches == 1 && found->has_arg == required_argument;
}

/* Mark the "--" that separates run A's traces from run B's: the first "--"
 * after an operand, options and their values skipped as getopt_long would. */
static void mark_run_separator(int argc, char **argv)
{
	int operands = 0, options_done = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			if (operands) {
				argv[i] = run_separator;
				return;
			}
			options_done = 1;
		} else if (!options_done && argv[i][0] == '-' && argv[i][1]) {
			i += takes_next(argv[i]);
		} else {
			operands++;
		}
	}
}

int main(int argc, char **argv)
{
	struct diff_cli ctx;

	memset(&ctx, 0, sizeof ctx);
	mark_run_separator(argc, argv);
	return ktrace_cli_main(&diff_tool, &ctx, argc, argv);
}
