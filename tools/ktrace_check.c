/* tools/ktrace_check.c: `ktrace check`, the one-command determinism check.
 *
 *   ktrace check [--runs N] [--dir DIR] [--keep] [tracing options] [diff options] -- CMD ...
 *
 * Runs CMD N times (default 2) under libktrace.so, each run tracing into
 * DIR/run<k>-r<rank>-p<pid>.ktrace, picks in every run the trace(s) that
 * recorded kernel launches (one per rank: child processes such as compile
 * workers leave empty traces), and diffs run 1 against every other run with
 * the ktrace-diff engine and reports.  Exit status: 0 no divergence, 1
 * diverged, 2 error (a run failed: which one and how; no trace; bad trace).
 * With --json the command's stdout goes to stderr: stdout is the JSON alone.
 */
#include "tools/ktrace_cli.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/cli_options.h"
#include "tools/diff.h"

#define MAX_RUNS 100
#define MAX_TRACES 64 /* traced processes with launches, per run */

struct run_trace {
	char path[PATH_MAX + 320];
	uint32_t rank;
	long launches;
};

struct run_info {
	struct run_trace t[MAX_TRACES];
	size_t n;
};

static void check_usage(FILE *f)
{
	fputs("usage: ktrace check [options] -- CMD [ARG...]\n"
	      "Run CMD several times under ktrace and compare run 1 with every other run,\n"
	      "launch by launch: the first kernel whose output differs, and whether its inputs\n"
	      "were identical (the kernel is non-deterministic) or not (naming the input and its\n"
	      "last writer).  Exit status: 0 no divergence, 1 diverged, 2 error (a run failed).\n"
	      "\n"
	      "options:\n"
	      "  --runs N            how many runs (default 2, at most 100)\n"
	      "  --dir DIR           write the traces into DIR and keep them (default: a temporary\n"
	      "                      directory, removed unless the runs diverged)\n"
	      "  --keep              keep the temporary directory in any case\n"
	      "  (with --json the command's own stdout goes to stderr, so stdout is JSON only)\n",
	      f);
	ktrace_run_opts_help(f, 0);
	ktrace_diff_cli_help(f, 0); /* --quiet is the tracing option here */
	fputs("  -h, --help          this text\n", f);
}

static void describe_status(int st, char *buf, size_t cap)
{
	if (WIFEXITED(st))
		snprintf(buf, cap, "exit status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, cap, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(buf, cap, "wait status 0x%x", st);
}

/* Run CMD once; 0 when it exited with status 0. */
static int run_once(int k, int nruns, const struct ktrace_run_opts *o, const char *lib, const char *dir,
		    char **cmd, const char *cmdline, int stdout_to_stderr)
{
	char pattern[PATH_MAX + 64], err[PATH_MAX + 256];
	snprintf(pattern, sizeof pattern, "%s/run%d-r%%r-p%%p.ktrace", dir, k);
	if (!o->quiet)
		fprintf(stderr, "ktrace check: run %d of %d: %s\n", k, nruns, cmdline);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ktrace check: run %d: cannot fork: %s\n", k, strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (ktrace_prepare_env(o, lib, pattern, err, sizeof err) || setenv("KTRACE_HASH", "1", 1)) {
			fprintf(stderr, "ktrace check: %s\n", err);
			_exit(127);
		}
		unsetenv("KTRACE_OVERWRITE");
		if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		execvp(cmd[0], cmd);
		fprintf(stderr, "ktrace check: cannot run '%s': %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "ktrace check: run %d: waitpid: %s\n", k, strerror(errno));
			return -1;
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	char how[128];
	describe_status(st, how, sizeof how);
	fprintf(stderr, "ktrace check: run %d of %d failed (%s): %s\n", k, nruns, how, cmdline);
	return -1;
}

static int cmp_trace(const void *a, const void *b)
{
	const struct run_trace *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The traces run k left that recorded launches, one per rank. */
static int collect(int k, const char *dir, struct run_info *ri)
{
	char prefix[32], err[PATH_MAX + 256];
	snprintf(prefix, sizeof prefix, "run%d-", k);
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "ktrace check: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	size_t files = 0;
	struct dirent *e;
	ri->n = 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, prefix, strlen(prefix)) || len < 7 || strcmp(e->d_name + len - 7, ".ktrace"))
			continue;
		files++;
		struct run_trace t;
		snprintf(t.path, sizeof t.path, "%s/%s", dir, e->d_name);
		t.launches = ktrace_tm_count_launches(t.path, &t.rank, err, sizeof err);
		if (t.launches < 0) {
			fprintf(stderr, "ktrace check: run %d: %s\n", k, err);
			closedir(d);
			return -1;
		}
		if (!t.launches)
			continue;
		if (ri->n == MAX_TRACES) {
			fprintf(stderr, "ktrace check: run %d: more than %d processes launched kernels\n", k, MAX_TRACES);
			closedir(d);
			return -1;
		}
		ri->t[ri->n++] = t;
	}
	closedir(d);
	if (!files) {
		fprintf(stderr, "ktrace check: run %d left no trace in %s: the command never used the CUDA driver, "
				"or libktrace.so was not loaded (static and setuid programs ignore LD_PRELOAD)\n", k, dir);
		return -1;
	}
	if (!ri->n) {
		fprintf(stderr, "ktrace check: run %d recorded no kernel launch (%zu trace file%s in %s): nothing "
				"to compare; does the command use the GPU?\n", k, files, files == 1 ? "" : "s", dir);
		return -1;
	}
	qsort(ri->t, ri->n, sizeof ri->t[0], cmp_trace);
	for (size_t i = 1; i < ri->n; i++)
		if (ri->t[i].rank == ri->t[i - 1].rank) {
			fprintf(stderr, "ktrace check: run %d: several processes of rank %u launched kernels (%s, %s): "
					"compare them with ktrace-diff\n", k, ri->t[i].rank, ri->t[i - 1].path, ri->t[i].path);
			return -1;
		}
	return 0;
}

/* A trace ktrace check wrote: run<k>-....ktrace. */
static int is_run_trace_name(const char *name)
{
	size_t len = strlen(name);
	return !strncmp(name, "run", 3) && len > 7 && !strcmp(name + len - 7, ".ktrace");
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char p[PATH_MAX + 300];
	while ((e = readdir(d))) {
		if (is_run_trace_name(e->d_name)) {
			snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
			unlink(p);
		}
	}
	closedir(d);
	rmdir(dir);
}

/* ---- the command line --------------------------------------------------------------- */

enum check_option {
	CHECK_OPT_RUNS = 0x300,
	CHECK_OPT_DIR,
	CHECK_OPT_KEEP,
};

static const struct option check_own_options[] = {
	{ "runs", required_argument, NULL, CHECK_OPT_RUNS },
	{ "dir", required_argument, NULL, CHECK_OPT_DIR },
	{ "keep", no_argument, NULL, CHECK_OPT_KEEP },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* What the command line asks for. */
struct check_opts {
	struct ktrace_run_opts run;
	struct diff_cli diff;
	int nruns, keep;
	const char *user_dir; /* --dir, or NULL */
	char **cmd;	      /* the command line to run, NULL-terminated */
	int cmd_argc;
};

/* Not an error: go on with the check (else an exit status). */
#define CHECK_GO_ON (-1)

static int check_own_opt(struct check_opts *co, int code, const char *value, char *err, size_t errlen)
{
	char *end;
	long n;

	switch (code) {
	case CHECK_OPT_RUNS:
		n = strtol(value, &end, 10);
		if (!*value || *end || n < 2 || n > MAX_RUNS) {
			snprintf(err, errlen, "--runs '%s': expected a number from 2 to %d", value, MAX_RUNS);
			return -1;
		}
		co->nruns = (int)n;
		return 1;
	case CHECK_OPT_DIR:
		if (!*value) {
			snprintf(err, errlen, "--dir needs a directory");
			return -1;
		}
		co->user_dir = value;
		return 1;
	case CHECK_OPT_KEEP:
		co->keep = 1;
		return 1;
	case KTRACE_RUN_OPT_OUTPUT:
	case KTRACE_RUN_OPT_NO_HASH:
	case KTRACE_RUN_OPT_OVERWRITE:
		snprintf(err, errlen, "%s is a `ktrace run` option: check writes its own hashed traces (see --dir)",
			 code == KTRACE_RUN_OPT_OUTPUT ? "-o/--output" :
			 code == KTRACE_RUN_OPT_NO_HASH ? "--no-hash" : "--overwrite");
		return -1;
	default:
		return 0;
	}
}

/* Read the options into *co; CHECK_GO_ON, or the exit status. */
static int parse_check_options(int argc, char **argv, struct check_opts *co)
{
	struct option longopts[32];
	char err[PATH_MAX + 256];
	int code, rc;

	memset(co, 0, sizeof *co);
	co->nruns = 2;
	/* the run file options are listed only to be refused with a reason */
	if (ktrace_cli_join(longopts, 32, check_own_options, ktrace_run_file_options, ktrace_run_trace_options,
			    ktrace_diff_report_options, NULL) < 0)
		return ktrace_cli_fail("ktrace check", "too many options (internal error)");
	ktrace_cli_begin();
	while ((code = ktrace_cli_next(argc, argv, "+:ho:", longopts, err, sizeof err)) != -1) {
		if (code == 'h') {
			check_usage(stdout);
			return 0;
		}
		if (code == '?')
			return ktrace_cli_usage_error("ktrace check", err);
		rc = check_own_opt(co, code, optarg, err, sizeof err);
		if (rc == 0)
			rc = ktrace_run_opt(&co->run, code, optarg, err, sizeof err);
		if (rc == 0)
			rc = ktrace_diff_cli_opt(&co->diff, code, optarg, err, sizeof err);
		if (rc < 0)
			return ktrace_cli_fail("ktrace check", err);
	}
	if (optind >= argc)
		return ktrace_cli_fail("ktrace check", "no command given (ktrace check [options] -- CMD ...)");
	co->cmd = argv + optind;
	co->cmd_argc = argc - optind;
	return CHECK_GO_ON;
}

/* ---- the trace directory ---------------------------------------------------------------- */

/* --dir: created if needed, and without traces of an earlier check (they would be mixed in). */
static int use_user_dir(const char *user_dir, char *dir, size_t cap)
{
	if (mkdir(user_dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "ktrace check: --dir %s: %s\n", user_dir, strerror(errno));
		return -1;
	}
	snprintf(dir, cap, "%s", user_dir);
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "ktrace check: --dir %s: %s\n", dir, strerror(errno));
		return -1;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (is_run_trace_name(e->d_name)) {
			fprintf(stderr, "ktrace check: --dir %s already holds traces (%s): use an empty directory\n", dir,
				e->d_name);
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

static int make_temp_dir(char *dir, size_t cap)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, cap, "%s/ktrace-check.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir))
		return 0;
	fprintf(stderr, "ktrace check: cannot create a directory %s: %s\n", dir, strerror(errno));
	return -1;
}

/* ---- running and comparing -------------------------------------------------------------- */

/* Everything one check holds; freed by check_state_free. */
struct check_state {
	const struct check_opts *co;
	char lib[PATH_MAX], dir[PATH_MAX];
	char cmdline[512];	  /* the command, for messages */
	struct run_info *runs;	  /* runs[1..nruns] */
	size_t nranks;		  /* traced processes per run */
	struct tm_trace *traces;  /* [(k - 1) * nranks + r] for run k, rank index r */
	size_t ntraces;		  /* loaded so far */
	char (*labels)[48];	  /* "run k" or "run k rank R", as traces */
	struct diff_result *results; /* run 1 against run k, per rank */
	const struct diff_result **result_ptrs;
	size_t nresults;
};

static void join_cmdline(char **cmd, int n, char *out, size_t cap)
{
	size_t used = 0;
	out[0] = '\0';
	for (int i = 0; i < n && used + 1 < cap; i++)
		used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? " " : "", cmd[i]);
}

/* Every run traced the same ranks (in collect()'s order). */
static int same_ranks(const struct check_state *s)
{
	const struct run_info *first = &s->runs[1];
	for (int k = 2; k <= s->co->nruns; k++) {
		const struct run_info *ri = &s->runs[k];
		int same = ri->n == first->n;
		for (size_t i = 0; same && i < first->n; i++)
			same = ri->t[i].rank == first->t[i].rank;
		if (!same) {
			fprintf(stderr, "ktrace check: run 1 and run %d traced different ranks (%zu and %zu traced "
					"processes): compare them with ktrace-diff\n", k, first->n, ri->n);
			return -1;
		}
	}
	return 0;
}

static int run_all(struct check_state *s)
{
	const struct check_opts *co = s->co;
	for (int k = 1; k <= co->nruns; k++)
		if (run_once(k, co->nruns, &co->run, s->lib, s->dir, co->cmd, s->cmdline, co->diff.json) ||
		    collect(k, s->dir, &s->runs[k]))
			return -1;
	return same_ranks(s);
}

static int alloc_comparisons(struct check_state *s)
{
	size_t nruns = (size_t)s->co->nruns, n = s->nranks;
	s->traces = calloc(nruns * n, sizeof *s->traces);
	s->labels = calloc(nruns * n, sizeof *s->labels);
	s->results = calloc((nruns - 1) * n, sizeof *s->results);
	s->result_ptrs = calloc((nruns - 1) * n, sizeof *s->result_ptrs);
	if (s->traces && s->labels && s->results && s->result_ptrs)
		return 0;
	fprintf(stderr, "ktrace check: out of memory\n");
	return -1;
}

static int load_traces(struct check_state *s)
{
	char err[PATH_MAX + 256];
	for (int k = 1; k <= s->co->nruns; k++)
		for (size_t r = 0; r < s->nranks; r++) {
			size_t idx = (size_t)(k - 1) * s->nranks + r;
			const struct run_trace *t = &s->runs[k].t[r];
			if (ktrace_tm_load(&s->traces[idx], t->path, s->co->diff.o.allow_truncated, err, sizeof err)) {
				fprintf(stderr, "ktrace check: run %d: %s\n", k, err);
				return -1;
			}
			s->ntraces = idx + 1;
			if (s->nranks > 1)
				snprintf(s->labels[idx], sizeof s->labels[idx], "run %d rank %u", k, t->rank);
			else
				snprintf(s->labels[idx], sizeof s->labels[idx], "run %d", k);
		}
	return 0;
}

/* Run 1 against every other run, rank by rank. */
static int compare_runs(struct check_state *s)
{
	char err[PATH_MAX + 256];
	for (size_t r = 0; r < s->nranks; r++)
		for (int k = 2; k <= s->co->nruns; k++) {
			size_t ia = r, ib = (size_t)(k - 1) * s->nranks + r;
			struct diff_opts dopts = s->co->diff.o;
			struct diff_result *res = &s->results[s->nresults];
			dopts.label_a = s->labels[ia];
			dopts.label_b = s->labels[ib];
			if (ktrace_diff_compare(&s->traces[ia], &s->traces[ib], &dopts, res, err, sizeof err)) {
				fprintf(stderr, "ktrace check: %s\n", err);
				return -1;
			}
			s->result_ptrs[s->nresults++] = res;
		}
	return 0;
}

/* The worst result, after the reports: 0 identical, 1 diverged, 2 a report failed. */
static int report(const struct check_state *s)
{
	char err[PATH_MAX + 256];
	int status = 0;
	for (size_t i = 0; i < s->nresults; i++)
		if (s->results[i].status > status)
			status = s->results[i].status;
	if (ktrace_diff_cli_report(&s->co->diff, s->result_ptrs, s->nresults, stdout, err, sizeof err)) {
		fprintf(stderr, "ktrace check: %s\n", err);
		status = 2;
	}
	return status;
}

/* Run, load, compare, report: the exit status. */
static int run_and_compare(struct check_state *s)
{
	s->runs = calloc((size_t)s->co->nruns + 1, sizeof *s->runs);
	if (!s->runs) {
		fprintf(stderr, "ktrace check: out of memory\n");
		return 2;
	}
	if (run_all(s))
		return 2;
	s->nranks = s->runs[1].n;
	if (alloc_comparisons(s) || load_traces(s) || compare_runs(s))
		return 2;
	return report(s);
}

static void check_state_free(struct check_state *s)
{
	for (size_t i = 0; i < s->nresults; i++)
		ktrace_diff_result_free(&s->results[i]);
	for (size_t i = 0; i < s->ntraces; i++)
		ktrace_tm_free(&s->traces[i]);
	free(s->results);
	free(s->result_ptrs);
	free(s->labels);
	free(s->traces);
	free(s->runs);
}

int ktrace_cmd_check(int argc, char **argv)
{
	struct check_opts co;
	struct check_state s;
	char err[PATH_MAX + 256];
	int status = parse_check_options(argc, argv, &co);

	if (status != CHECK_GO_ON)
		return status;
	memset(&s, 0, sizeof s);
	s.co = &co;
	if (ktrace_find_lib(s.lib, sizeof s.lib, err, sizeof err))
		return ktrace_cli_fail("ktrace check", err);
	if (co.user_dir ? use_user_dir(co.user_dir, s.dir, sizeof s.dir) : make_temp_dir(s.dir, sizeof s.dir))
		return 2;
	join_cmdline(co.cmd, co.cmd_argc, s.cmdline, sizeof s.cmdline);
	status = run_and_compare(&s);
	check_state_free(&s);
	/* kept when asked, and when the runs diverged (to look at them); an
	 * error already said its one line (--keep keeps a failed run's traces) */
	if (co.user_dir || co.keep || status == 1)
		fprintf(stderr, "ktrace check: traces kept in %s\n", s.dir);
	else
		remove_dir(s.dir);
	fflush(stdout);
	return status;
}
