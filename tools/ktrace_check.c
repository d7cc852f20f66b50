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
	ktrace_diff_cli_help(f);
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

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char p[PATH_MAX + 300];
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (!strncmp(e->d_name, "run", 3) && len > 7 && !strcmp(e->d_name + len - 7, ".ktrace")) {
			snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
			unlink(p);
		}
	}
	closedir(d);
	rmdir(dir);
}

int ktrace_cmd_check(int argc, char **argv)
{
	struct ktrace_run_opts o;
	struct diff_cli dc;
	char err[PATH_MAX + 256];
	int nruns = 2, keep = 0, cmd = -1;
	const char *user_dir = NULL;
	memset(&o, 0, sizeof o);
	memset(&dc, 0, sizeof dc);
	for (int i = 1; i < argc;) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			cmd = i + 1;
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			check_usage(stdout);
			return 0;
		}
		if (a[0] != '-') {
			cmd = i;
			break;
		}
		if (!strcmp(a, "--runs") || !strncmp(a, "--runs=", 7)) {
			const char *v = a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : "");
			char *end;
			long n = strtol(v, &end, 10);
			if (!*v || *end || n < 2 || n > MAX_RUNS) {
				fprintf(stderr, "ktrace check: --runs '%s': expected a number from 2 to %d\n", v, MAX_RUNS);
				return 2;
			}
			nruns = (int)n;
			i++;
			continue;
		}
		if (!strcmp(a, "--dir") || !strncmp(a, "--dir=", 6)) {
			user_dir = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : "");
			if (!*user_dir) {
				fprintf(stderr, "ktrace check: --dir needs a directory\n");
				return 2;
			}
			i++;
			continue;
		}
		if (!strcmp(a, "--keep")) {
			keep = 1;
			i++;
			continue;
		}
		if (!strcmp(a, "--no-hash") || !strcmp(a, "-o") || !strncmp(a, "--output", 8) ||
		    !strcmp(a, "--overwrite")) {
			fprintf(stderr, "ktrace check: %s is a `ktrace run` option: check writes its own hashed traces "
					"(see --dir)\n", a);
			return 2;
		}
		int rc = ktrace_run_opt(&o, 0, argc, argv, &i, err, sizeof err);
		if (rc == 0)
			rc = ktrace_diff_cli_arg(&dc, argc, argv, &i, err, sizeof err);
		if (rc < 0) {
			fprintf(stderr, "ktrace check: %s\n", err);
			return 2;
		}
		if (rc == 0) {
			fprintf(stderr, "ktrace check: unknown option '%s' (see ktrace check --help)\n", a);
			return 2;
		}
	}
	if (cmd < 0 || cmd >= argc) {
		fprintf(stderr, "ktrace check: no command given (ktrace check [options] -- CMD ...)\n");
		return 2;
	}
	char lib[PATH_MAX];
	if (ktrace_find_lib(lib, sizeof lib, err, sizeof err)) {
		fprintf(stderr, "ktrace check: %s\n", err);
		return 2;
	}
	char dir[PATH_MAX];
	if (user_dir) {
		if (mkdir(user_dir, 0700) != 0 && errno != EEXIST) {
			fprintf(stderr, "ktrace check: --dir %s: %s\n", user_dir, strerror(errno));
			return 2;
		}
		snprintf(dir, sizeof dir, "%s", user_dir);
		/* traces of an earlier check in the same directory would be mixed in */
		DIR *d = opendir(dir);
		if (!d) {
			fprintf(stderr, "ktrace check: --dir %s: %s\n", dir, strerror(errno));
			return 2;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t len = strlen(e->d_name);
			if (!strncmp(e->d_name, "run", 3) && len > 7 && !strcmp(e->d_name + len - 7, ".ktrace")) {
				fprintf(stderr, "ktrace check: --dir %s already holds traces (%s): use an empty "
						"directory\n", dir, e->d_name);
				closedir(d);
				return 2;
			}
		}
		closedir(d);
	} else {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/ktrace-check.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			fprintf(stderr, "ktrace check: cannot create a directory %s: %s\n", dir, strerror(errno));
			return 2;
		}
	}

	/* the command line, for messages */
	char cmdline[512];
	size_t cl = 0;
	cmdline[0] = '\0';
	for (int i = cmd; i < argc && cl + 1 < sizeof cmdline; i++)
		cl += (size_t)snprintf(cmdline + cl, sizeof cmdline - cl, "%s%s", i > cmd ? " " : "", argv[i]);

	int status = 2;
	struct run_info *runs = calloc((size_t)nruns + 1, sizeof *runs);
	struct tm_trace *traces = NULL;
	struct diff_result *results = NULL;
	const struct diff_result **rp = NULL;
	size_t nres = 0, ntr = 0;
	if (!runs) {
		fprintf(stderr, "ktrace check: out of memory\n");
		goto out;
	}
	for (int k = 1; k <= nruns; k++)
		if (run_once(k, nruns, &o, lib, dir, argv + cmd, cmdline, dc.json) || collect(k, dir, &runs[k]))
			goto out;
	for (int k = 2; k <= nruns; k++) {
		int same = runs[k].n == runs[1].n;
		for (size_t i = 0; same && i < runs[1].n; i++)
			same = runs[k].t[i].rank == runs[1].t[i].rank;
		if (!same) {
			fprintf(stderr, "ktrace check: run 1 and run %d traced different ranks (%zu and %zu traced "
					"processes): compare them with ktrace-diff\n", k, runs[1].n, runs[k].n);
			goto out;
		}
	}
	size_t nranks = runs[1].n;
	traces = calloc((size_t)nruns * nranks, sizeof *traces);
	results = calloc((size_t)(nruns - 1) * nranks, sizeof *results);
	rp = calloc((size_t)(nruns - 1) * nranks, sizeof *rp);
	char (*labels)[48] = calloc((size_t)nruns * nranks, sizeof *labels);
	if (!traces || !results || !rp || !labels) {
		free(labels);
		fprintf(stderr, "ktrace check: out of memory\n");
		goto out;
	}
	for (int k = 1; k <= nruns; k++)
		for (size_t r = 0; r < nranks; r++) {
			size_t idx = (size_t)(k - 1) * nranks + r;
			if (ktrace_tm_load(&traces[idx], runs[k].t[r].path, dc.o.allow_truncated, err, sizeof err)) {
				fprintf(stderr, "ktrace check: run %d: %s\n", k, err);
				free(labels);
				goto out;
			}
			ntr = idx + 1;
			if (nranks > 1)
				snprintf(labels[idx], sizeof labels[idx], "run %d rank %u", k, runs[k].t[r].rank);
			else
				snprintf(labels[idx], sizeof labels[idx], "run %d", k);
		}
	for (size_t r = 0; r < nranks; r++)
		for (int k = 2; k <= nruns; k++) {
			size_t ia = r, ib = (size_t)(k - 1) * nranks + r;
			struct diff_opts dopts = dc.o;
			dopts.label_a = labels[ia];
			dopts.label_b = labels[ib];
			if (ktrace_diff_compare(&traces[ia], &traces[ib], &dopts, &results[nres], err, sizeof err)) {
				fprintf(stderr, "ktrace check: %s\n", err);
				free(labels);
				goto out;
			}
			rp[nres] = &results[nres];
			nres++;
		}
	status = 0;
	for (size_t i = 0; i < nres; i++)
		if (results[i].status > status)
			status = results[i].status;
	if (ktrace_diff_cli_report(&dc, rp, nres, stdout, err, sizeof err)) {
		fprintf(stderr, "ktrace check: %s\n", err);
		status = 2;
	}
	free(labels);
out:
	for (size_t i = 0; i < nres; i++)
		ktrace_diff_result_free(&results[i]);
	for (size_t i = 0; i < ntr; i++)
		ktrace_tm_free(&traces[i]);
	free(results);
	free(rp);
	free(traces);
	free(runs);
	/* kept when asked, and when the runs diverged (to look at them); an
	 * error already said its one line (--keep keeps a failed run's traces) */
	if (user_dir || keep || status == 1)
		fprintf(stderr, "ktrace check: traces kept in %s\n", dir);
	else
		remove_dir(dir);
	fflush(stdout);
	return status;
}
