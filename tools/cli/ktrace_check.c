/* tools/cli/ktrace_check.c: `ktrace check`, the one-command determinism check.
 *
 *   ktrace check [--runs N] [--dir DIR] [--keep] [--no-warmup] [--max-replays N]
 *                [--replays K] [tracing options] [diff options] -- CMD ...
 *
 * Runs CMD once untraced (a warm-up, so that every traced run finds the same
 * compile and autotuning caches), then N times (default 2) under
 * libktrace.so, each run tracing into DIR/run<k>-r<rank>-p<pid>.ktrace, picks
 * in every run the trace(s) that recorded kernel launches (one per rank:
 * child processes such as compile workers leave empty traces), and diffs
 * run 1 against every other run with the ktrace-diff engine.  A divergence
 * found by digests is then confirmed before it is reported as one: CMD runs
 * again with KTRACE_REPLAY naming the divergent launch (replay<j>-...), whose
 * trace says whether K replays of that launch from identical inputs gave
 * different results; not confirmed, the last writers of its differing inputs
 * and the next divergences are tried, at most --max-replays runs in all
 * (check_confirm.c chooses them).
 *
 * A distributed job (CMD is a launcher, or run 1's processes write JOB
 * records of a job of several ranks) is checked by check_job.c: each run's
 * traces in DIR/run<k>/ (and DIR/replay<j>/), one job verdict per pair of
 * runs, the culprit replayed in a run of the whole job on its rank alone.
 *
 * Exit status: 0 nothing confirmed diverged (digest differences that no
 * replay confirmed are reported as notes), 1 a confirmed divergence (or,
 * with --max-replays 0, a divergence by digests alone; with --strict,
 * launches in one run only or unverified; or the program's own results,
 * its device-to-host copies, differ), 2 error (a run failed: which one
 * and how; no trace; no CUDA driver; bad trace; nothing compared).  With
 * --json the command's stdout goes to stderr: stdout is the JSON alone.
 * A check that fails before it compares anything still writes every report
 * asked for, saying what failed (check_report.c).  The temporary directory
 * is removed with everything in it unless kept (--keep, or the runs diverged).
 */
#include "tools/cli/check_internal.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/cli/cli_options.h"

#define MAX_REPLAY_RUNS 100
#define DEFAULT_REPLAY_RUNS 3
#define DEFAULT_REPLAYS 8

static void check_usage(FILE *f)
{
	fputs("usage: ktrace check [options] -- CMD [ARG...]\n"
	      "Run CMD several times under ktrace and compare run 1 with every other run,\n"
	      "launch by launch: the first kernel whose output differs, and whether its\n"
	      "inputs were identical (the kernel is non-deterministic) or not (naming the\n"
	      "input and its last writer).  A divergence is confirmed before it counts: CMD\n"
	      "runs once more and replays that launch in isolation from identical inputs\n"
	      "(KTRACE_REPLAY).\n"
	      "\n"
	      "A distributed job (CMD is torchrun, python -m torch.distributed.run, mpirun,\n"
	      "mpiexec or srun, or its processes are ranks of a job of several): each run's\n"
	      "traces go into DIR/run<k>/, rank k of run 1 is compared with rank k of the\n"
	      "other, and one verdict names the first divergence in causal order across the\n"
	      "ranks (their NCCL operations); its launch is replayed in one more run of the\n"
	      "whole job, on its rank alone (rank=R in KTRACE_REPLAY).\n"
	      "\n"
	      "check options:\n"
	      "  --runs N            how many traced runs (default 2, at most 100)\n"
	      "  --no-warmup         no untraced run first (by default one warms the compile\n"
	      "                      and autotuning caches, so that the traced runs launch\n"
	      "                      alike)\n"
	      "  --max-replays N     at most N more runs to confirm divergences by replay\n"
	      "                      (default 3, at most 100; 0: no confirmation, the\n"
	      "                      digests' verdict stands)\n"
	      "  --replays K         replays of the launch in each such run (default 8, 1 to\n"
	      "                      1000)\n"
	      "  --dir DIR           write the traces into DIR and keep them (default: a\n"
	      "                      temporary directory, removed unless the runs diverged)\n"
	      "  --keep              keep the temporary directory in any case\n"
	      "  --no-python-stack   replay runs take no Python stacks (by default the run\n"
	      "                      that confirms a launch also gives the Python line that\n"
	      "                      launched it, and for a backward kernel the one that\n"
	      "                      called its forward op; docs/ranges.md)\n"
	      "\n"
	      "tracing options:\n",
	      f);
	ktrace_run_opts_help(f, 0);
	fputs("\nreport options:\n", f);
	ktrace_diff_cli_help(f, 1);
	fputs("\n"
	      "options:\n"
	      "  -h, --help          this text\n"
	      "  --version           print the version\n"
	      "\n"
	      "Exit status: 0 nothing confirmed diverged (digest differences no replay\n"
	      "confirmed are notes), 1 a confirmed divergence or different program results\n"
	      "(device-to-host copies), 2 error (a run failed; nothing compared).\n",
	      f);
}

/* The errors this check printed, kept for its reports when it fails before
 * comparing anything: one line each, without "ktrace check: ". */
static char check_errors[4096];

void ktrace_check_error(const char *fmt, ...)
{
	char line[1536];
	size_t used = strlen(check_errors);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "ktrace check: %s\n", line);
	snprintf(check_errors + used, sizeof check_errors - used, "%s\n", line);
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

static int cmp_trace(const void *a, const void *b)
{
	const struct run_trace *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* A trace of dir to collect: named <prefix>-*.ktrace, or any *.ktrace when
 * prefix is NULL (a job's run directory). */
static int is_trace_of(const char *name, const char *prefix)
{
	size_t len = strlen(name), plen = prefix ? strlen(prefix) : 0;

	if (prefix && (strncmp(name, prefix, plen) || name[plen] != '-'))
		return 0;
	return len >= plen + 7 && !strcmp(name + len - 7, ".ktrace");
}

/* The traces files of dir named as is_trace_of says that recorded launches
 * (what: "run 2", for messages); *nfiles: every such file, launches or not.
 * A job's (job set) may end early: a killed rank's is compared as far as it
 * goes. */
static int collect_traces(const char *what, const char *prefix, const char *dir, int job, struct run_info *ri,
			  size_t *nfiles)
{
	char err[PATH_MAX + 256];
	DIR *d = opendir(dir);
	if (!d) {
		ktrace_check_error("%s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *e;
	ri->n = 0;
	*nfiles = 0;
	while ((e = readdir(d))) {
		if (!is_trace_of(e->d_name, prefix))
			continue;
		(*nfiles)++;
		struct run_trace t;
		struct tm_run_scan scan;
		snprintf(t.path, sizeof t.path, "%s/%s", dir, e->d_name);
		int rc = ktrace_tm_scan_run(t.path, &scan, err, sizeof err);
		t.launches = rc == 0 || (job && scan.truncated && scan.have_header) ? scan.launches : -1;
		t.rank = scan.rank;
		t.world_size = scan.world_size;
		t.graphs_memory_nodes = scan.graphs_memory_nodes;
		if (t.launches < 0) {
			ktrace_check_error("%s: %s", what, err);
			closedir(d);
			return -1;
		}
		if (!t.launches && !scan.graphs)
			continue;
		if (ri->n == MAX_TRACES) {
			ktrace_check_error("%s: more than %d processes launched kernels", what, MAX_TRACES);
			closedir(d);
			return -1;
		}
		ri->t[ri->n++] = t;
	}
	closedir(d);
	qsort(ri->t, ri->n, sizeof ri->t[0], cmp_trace);
	return 0;
}

/* Where run or replay `prefix` left its traces: DIR, or a job's DIR/<prefix>. */
static void traces_dir(const struct check_state *s, const char *prefix, char *out, size_t cap)
{
	if (s->job_dirs)
		snprintf(out, cap, "%s/%s", s->dir, prefix);
	else
		snprintf(out, cap, "%s", s->dir);
}

/* The traces run k left that recorded launches, one per rank (a job's
 * ranks are paired by the job diff, which says what does not pair up). */
static int collect(const struct check_state *s, int k, struct run_info *ri)
{
	char prefix[32], what[32], dir[PATH_MAX + 40];
	size_t files;
	snprintf(prefix, sizeof prefix, "run%d", k);
	snprintf(what, sizeof what, "run %d", k);
	traces_dir(s, prefix, dir, sizeof dir);
	if (collect_traces(what, s->job_dirs ? NULL : prefix, dir, s->job_dirs, ri, &files))
		return -1;
	if (!files && !ktrace_cuda_driver_found()) {
		ktrace_check_error("run %d left no trace: %s", k, KTRACE_NO_DRIVER_MESSAGE);
		return -1;
	}
	if (!files) {
		ktrace_check_error("run %d left no trace in %s: the command never used the CUDA driver, "
				"or libktrace.so was not loaded (static and setuid programs ignore LD_PRELOAD)", k, dir);
		return -1;
	}
	if (!ri->n) {
		ktrace_check_error("run %d recorded no kernel launch (%zu trace file%s in %s): nothing "
				"to compare; does the command use the GPU?", k, files, files == 1 ? "" : "s", dir);
		return -1;
	}
	for (size_t i = 1; i < ri->n && !s->job_dirs; i++)
		if (ri->t[i].rank == ri->t[i - 1].rank) {
			ktrace_check_error("run %d: several processes of rank %u launched kernels (%s, %s): "
					"compare them with ktrace-diff", k, ri->t[i].rank, ri->t[i - 1].path, ri->t[i].path);
			return -1;
		}
	return 0;
}

/* What ktrace check wrote: traces run<k>-....ktrace, replay<j>-....ktrace,
 * and a job's run<k>/ and replay<j>/ directories. */
static int is_run_trace_name(const char *name)
{
	size_t len = strlen(name), p = !strncmp(name, "run", 3) ? 3 : !strncmp(name, "replay", 6) ? 6 : 0;

	if (!p)
		return 0;
	if (len > p && strspn(name + p, "0123456789") == len - p)
		return 1;
	return len > 7 && !strcmp(name + len - 7, ".ktrace");
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0; /* on to the next, whatever happened */
}

/* The temporary directory ktrace check made, and everything in it: the
 * traces, what the command left there (JAX's compilation cache).  Symbolic
 * links are removed, never followed. */
static void remove_temp_dir(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- the command line --------------------------------------------------------------- */

enum check_option {
	CHECK_OPT_RUNS = 0x300,
	CHECK_OPT_DIR,
	CHECK_OPT_KEEP,
	CHECK_OPT_NO_WARMUP,
	CHECK_OPT_MAX_REPLAYS,
	CHECK_OPT_REPLAYS,
	CHECK_OPT_NO_PYTHON_STACK,
};

static const struct option check_own_options[] = {
	KTRACE_CLI_ARG("runs", CHECK_OPT_RUNS), KTRACE_CLI_ARG("dir", CHECK_OPT_DIR),
	KTRACE_CLI_FLAG("keep", CHECK_OPT_KEEP), KTRACE_CLI_FLAG("no-warmup", CHECK_OPT_NO_WARMUP),
	KTRACE_CLI_ARG("max-replays", CHECK_OPT_MAX_REPLAYS), KTRACE_CLI_ARG("replays", CHECK_OPT_REPLAYS),
	KTRACE_CLI_FLAG("no-python-stack", CHECK_OPT_NO_PYTHON_STACK), KTRACE_CLI_END,
};

/* A decimal number from lo to hi into *out: 1, or -1 with err. */
static int number_opt(const char *option, const char *value, long lo, long hi, int *out, char *err, size_t errlen)
{
	char *end;
	long n = strtol(value, &end, 10);

	if (!*value || *end || n < lo || n > hi) {
		snprintf(err, errlen, "%s '%s': expected a number from %ld to %ld", option, value, lo, hi);
		return -1;
	}
	*out = (int)n;
	return 1;
}

static int check_own_opt(struct check_opts *co, int code, const char *value, char *err, size_t errlen)
{
	switch (code) {
	case CHECK_OPT_RUNS:
		return number_opt("--runs", value, 2, MAX_RUNS, &co->nruns, err, errlen);
	case CHECK_OPT_MAX_REPLAYS:
		return number_opt("--max-replays", value, 0, MAX_REPLAY_RUNS, &co->max_replays, err, errlen);
	case CHECK_OPT_REPLAYS:
		return number_opt("--replays", value, 1, 1000, &co->replays, err, errlen);
	case CHECK_OPT_NO_WARMUP:
		co->no_warmup = 1;
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
	case CHECK_OPT_NO_PYTHON_STACK:
		co->no_python_stack = 1;
		return 1;
	case KTRACE_RUN_OPT_PYTHON_STACK:
		snprintf(err, errlen, "--python-stack is a `ktrace run` option: check takes the Python stacks of the "
			 "launches it replays (--no-python-stack turns that off)");
		return -1;
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

/* An option of check's own, a tracing option or a diff option. */
static int check_option(void *ctx, int code, const char *value, char *err, size_t errlen)
{
	struct check_opts *co = ctx;
	int rc = check_own_opt(co, code, value, err, errlen);

	if (rc == 0)
		rc = ktrace_run_opt(&co->run, code, value, err, errlen);
	if (rc == 0)
		rc = ktrace_diff_cli_opt(&co->diff, code, value, err, errlen);
	return rc < 0 ? -1 : 0;
}

/* ---- the trace directory ---------------------------------------------------------------- */

/* --dir: created if needed, and without traces of an earlier check (they would be mixed in). */
static int use_user_dir(const char *user_dir, char *dir, size_t cap)
{
	if (mkdir(user_dir, 0700) != 0 && errno != EEXIST) {
		ktrace_check_error("--dir %s: %s", user_dir, strerror(errno));
		return -1;
	}
	snprintf(dir, cap, "%s", user_dir);
	DIR *d = opendir(dir);
	if (!d) {
		ktrace_check_error("--dir %s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (is_run_trace_name(e->d_name)) {
			ktrace_check_error("--dir %s already holds traces (%s): use an empty directory", dir,
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
	ktrace_check_error("cannot create a directory %s: %s", dir, strerror(errno));
	return -1;
}

/* ---- running and comparing -------------------------------------------------------------- */

/* ---- running the command ------------------------------------------------------------------ */

/* With a warm-up run, JAX programs get a persistent compilation cache in
 * DIR/jax-cache (unless the environment names one): the warm-up compiles
 * and autotunes, the traced runs load what it compiled, and so launch the
 * same kernels in the same order (autotuning's trial launches vary from run
 * to run).  0, or -1 with err set. */
static int set_compile_cache(const struct check_state *s, char *err, size_t errlen)
{
	char dir[PATH_MAX + 32];

	if (s->co->no_warmup || getenv("JAX_COMPILATION_CACHE_DIR"))
		return 0;
	snprintf(dir, sizeof dir, "%s/jax-cache", s->dir);
	if (setenv("JAX_COMPILATION_CACHE_DIR", dir, 1) ||
	    setenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0", 0) ||
	    setenv("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0", 0)) {
		snprintf(err, errlen, "JAX_COMPILATION_CACHE_DIR: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void exec_child(const struct check_state *s, const struct run_plan *p)
{
	char pattern[PATH_MAX + 64], err[PATH_MAX + 256];
	const struct check_opts *co = s->co;
	struct ktrace_run_opts ro = co->run;

	int torch_ops = ro.torch_ops != KTRACE_TORCH_OPS_OFF; /* on by default under check */

	ro.keep_allocator |= s->own_allocator;
	ro.python_stack = p->pystack;
	if (set_compile_cache(s, err, sizeof err) ||
	    (!p->prefix && (ktrace_set_allocator_env(&ro, err, sizeof err) ||
			    ktrace_set_python_env(&ro, torch_ops, s->lib, err, sizeof err)))) {
		fprintf(stderr, "ktrace check: %s\n", err);
		_exit(127);
	}
	if (p->prefix) {
		snprintf(pattern, sizeof pattern, s->job_dirs ? "%s/%s/r%%r-p%%p.ktrace" : "%s/%s-r%%r-p%%p.ktrace",
			 s->dir, p->prefix);
		if (ktrace_prepare_env(&ro, torch_ops, s->lib, pattern, err, sizeof err) ||
		    setenv("KTRACE_HASH", p->replay ? "0" : "1", 1) ||
		    (p->replay ? setenv("KTRACE_REPLAY", p->replay, 1) : unsetenv("KTRACE_REPLAY"))) {
			fprintf(stderr, "ktrace check: %s\n", err);
			_exit(127);
		}
		unsetenv("KTRACE_OVERWRITE");
	}
	if (co->diff.json && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		_exit(127);
	execvp(co->cmd[0], co->cmd);
	fprintf(stderr, "ktrace check: cannot run '%s': %s\n", co->cmd[0], strerror(errno));
	_exit(127);
}

/* Run CMD as p says; 0 with its wait status in *st, -1 when it could not run. */
static int run_command(const struct check_state *s, const struct run_plan *p, int *st)
{
	char dir[PATH_MAX + 40];

	if (p->prefix && s->job_dirs) {
		traces_dir(s, p->prefix, dir, sizeof dir);
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			ktrace_check_error("%s: %s", dir, strerror(errno));
			return -1;
		}
	}
	if (!s->co->run.quiet)
		fprintf(stderr, "ktrace check: %s: %s%s%s%s\n", p->what, p->replay ? "KTRACE_REPLAY=" : "",
			p->replay ? p->replay : "", p->replay ? " " : "", s->cmdline);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		ktrace_check_error("%s: cannot fork: %s", p->what, strerror(errno));
		return -1;
	}
	if (pid == 0)
		exec_child(s, p);
	while (waitpid(pid, st, 0) < 0)
		if (errno != EINTR) {
			ktrace_check_error("%s: waitpid: %s", p->what, strerror(errno));
			return -1;
		}
	return 0;
}

/* A run that must succeed (the warm-up, the traced runs): 0 when CMD exited 0. */
static int run_must_pass(const struct check_state *s, const struct run_plan *p)
{
	char how[128];
	int st;

	if (run_command(s, p, &st))
		return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	describe_status(st, how, sizeof how);
	ktrace_check_error("%s failed (%s): %s", p->what, how, s->cmdline);
	return -1;
}

static void join_cmdline(char **cmd, int n, char *out, size_t cap)
{
	size_t used = 0;
	out[0] = '\0';
	for (int i = 0; i < n && used + 1 < cap; i++)
		used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? " " : "", cmd[i]);
}

/* Every run traced the same ranks (in collect()'s order); a job's ranks
 * that do not pair up are the job diff's findings. */
static int same_ranks(const struct check_state *s)
{
	const struct run_info *first = &s->runs[1];
	for (int k = 2; k <= s->co->nruns && !s->job; k++) {
		const struct run_info *ri = &s->runs[k];
		int same = ri->n == first->n;
		for (size_t i = 0; same && i < first->n; i++)
			same = ri->t[i].rank == first->t[i].rank;
		if (!same) {
			ktrace_check_error("run 1 and run %d traced different ranks (%zu and %zu traced "
					"processes): compare them with ktrace-diff", k, first->n, ri->n);
			return -1;
		}
	}
	return 0;
}

/* Remove the traces a failed run left (DIR/<prefix>-*.ktrace, a job's DIR/<prefix>/). */
static void remove_run_traces(const struct check_state *s, const char *prefix)
{
	char path[PATH_MAX + 600], dir[PATH_MAX + 40];
	DIR *d;
	struct dirent *e;

	traces_dir(s, prefix, dir, sizeof dir);
	if (!(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		if (!is_trace_of(e->d_name, s->job_dirs ? NULL : prefix))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

/* The first run (the warm-up, else run 1) must pass; when it fails under the
 * allocator settings ktrace chose, it runs again with the program's own, and
 * so do all later runs (some programs do not work with one allocation per
 * tensor, e.g. PyTorch's CUDA graph trees with cudaMallocAsync). */
static int first_run_must_pass(struct check_state *s, const struct run_plan *p)
{
	if (run_must_pass(s, p) == 0)
		return 0;
	if (!ktrace_cuda_driver_found()) { /* not the allocator's fault: say so, and run nothing more */
		ktrace_check_error("%s", KTRACE_NO_DRIVER_MESSAGE);
		return -1;
	}
	if (!ktrace_allocator_changes(&s->co->run))
		return -1;
	fprintf(stderr, "ktrace check: note: the program failed with the allocator settings ktrace chose "
			"(one allocation per tensor); running it again with its own allocator, as "
			"--keep-allocator would: buffer extents may be inferred\n");
	s->own_allocator = 1;
	if (p->prefix)
		remove_run_traces(s, p->prefix);
	return run_must_pass(s, p);
}

/* Under the allocator settings ktrace chose, a program's CUDA graphs may
 * allocate their memory inside the graph (PyTorch's cudaMallocAsync backend
 * during capture), which ktrace cannot hash; with the program's own
 * allocator they do not.  1 when run 1 showed such graphs and the runs go
 * on with the program's allocator (said in one line). */
static int graphs_need_own_allocator(struct check_state *s)
{
	long n = 0;

	if (s->own_allocator || !ktrace_allocator_changes(&s->co->run))
		return 0;
	for (size_t i = 0; i < s->runs[1].n; i++)
		n += s->runs[1].t[i].graphs_memory_nodes;
	if (!n)
		return 0;
	fprintf(stderr, "ktrace check: note: under the allocator settings ktrace chose, %ld CUDA graph%s of the "
			"program allocate memory inside the graph, which ktrace cannot hash; running it again with "
			"its own allocator, as --keep-allocator would: buffer extents may be inferred\n",
		n, n == 1 ? "" : "s");
	s->own_allocator = 1;
	return 1;
}

/* Run 1's processes turned out to be ranks of a job: its traces move into
 * DIR/run1/, as the later runs' go into DIR/run<k>/.  0, or -1 (said). */
static int job_found(struct check_state *s)
{
	if (ktrace_check_job_report_options(s->co) || ktrace_check_job_adopt(s, "run1"))
		return -1;
	s->job = s->job_dirs = 1;
	return collect(s, 1, &s->runs[1]);
}

/* The warm-up (untraced), then the traced runs. */
static int run_all(struct check_state *s)
{
	const struct check_opts *co = s->co;
	char what[64], prefix[32];

	if (!co->no_warmup) {
		struct run_plan warm = { "warm-up run (untraced, so that the traced runs find warm caches)", NULL,
					 NULL, NULL };
		if (first_run_must_pass(s, &warm))
			return -1;
	}
	for (int k = 1; k <= co->nruns; k++) {
		snprintf(what, sizeof what, "run %d of %d", k, co->nruns);
		snprintf(prefix, sizeof prefix, "run%d", k);
		struct run_plan p = { what, prefix, NULL, NULL };
		int rc = k == 1 && co->no_warmup ? first_run_must_pass(s, &p) : run_must_pass(s, &p);
		if (rc || collect(s, k, &s->runs[k]))
			return -1;
		if (k == 1 && graphs_need_own_allocator(s)) {
			remove_run_traces(s, prefix);
			if (run_must_pass(s, &p) || collect(s, k, &s->runs[k]))
				return -1;
		}
		if (k == 1 && !s->job && ktrace_check_ranks_of_job(&s->runs[1]) && job_found(s))
			return -1;
	}
	return same_ranks(s);
}

/* ---- comparing ------------------------------------------------------------------------------ */

static int alloc_comparisons(struct check_state *s)
{
	size_t nruns = (size_t)s->co->nruns, n = s->nranks;
	s->traces = calloc(nruns * n, sizeof *s->traces);
	s->labels = calloc(nruns * n, sizeof *s->labels);
	s->results = calloc((nruns - 1) * n, sizeof *s->results);
	s->result_ptrs = calloc((nruns - 1) * n, sizeof *s->result_ptrs);
	s->confirm = calloc(n, sizeof *s->confirm);
	if (s->traces && s->labels && s->results && s->result_ptrs && s->confirm)
		return 0;
	ktrace_check_error("out of memory");
	return -1;
}

static int load_traces(struct check_state *s)
{
	char err[PATH_MAX + 256];
	int allow = s->co->diff.o.allow_truncated;
	for (int k = 1; k <= s->co->nruns; k++)
		for (size_t r = 0; r < s->nranks; r++) {
			size_t idx = (size_t)(k - 1) * s->nranks + r;
			const struct run_trace *t = &s->runs[k].t[r];
			/* runs after the first beside run 1's trace of the rank (compare_runs' pairs):
			 * the launches they have in common share its memory */
			int bad = k == 1 ? ktrace_tm_load(&s->traces[idx], t->path, allow, err, sizeof err)
					 : ktrace_tm_load_second(&s->traces[idx], t->path, &s->traces[r], allow, err,
								 sizeof err);
			if (bad) {
				ktrace_check_error("run %d: %s", k, err);
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
				ktrace_check_error("%s", err);
				return -1;
			}
			s->result_ptrs[s->nresults++] = res;
		}
	return 0;
}

/* ---- confirming by replay ---------------------------------------------------------------------- */

/* What replay run j left: the REPLAY record of the trace of rank `rank`. */
static void read_replay_run(struct check_state *s, int j, uint32_t rank, struct diff_confirm *c)
{
	char prefix[32], what[48], err[PATH_MAX + 256], dir[PATH_MAX + 40];
	struct run_info *ri = malloc(sizeof *ri);
	struct tm_trace t;
	size_t files;

	snprintf(prefix, sizeof prefix, "replay%d", j);
	snprintf(what, sizeof what, "replay run %d", j);
	traces_dir(s, prefix, dir, sizeof dir);
	if (!ri || collect_traces(what, s->job_dirs ? NULL : prefix, dir, s->job_dirs, ri, &files)) {
		snprintf(c->why, sizeof c->why, "the replay run's traces could not be read");
		free(ri);
		return;
	}
	for (size_t i = 0; i < ri->n; i++) {
		if (ri->t[i].rank != rank)
			continue;
		if (ktrace_tm_load(&t, ri->t[i].path, 1, err, sizeof err)) {
			snprintf(c->why, sizeof c->why, "the replay run's trace could not be read: %.180s", err);
			free(ri);
			return;
		}
		ktrace_check_take_replay(&t, c);
		ktrace_tm_free(&t);
		free(ri);
		return;
	}
	free(ri);
	snprintf(c->why, sizeof c->why, "the replay run left no trace of rank %u with launches", rank);
}

void ktrace_check_replay_one(struct check_state *s, const struct tm_trace *a, uint32_t rank, int32_t spec_rank,
			     const struct check_candidate *cand, struct diff_confirm *c)
{
	char spec[2048], pystack[2048], what[320], prefix[32], how[128];
	int st, j = ++s->replay_runs;

	memset(c, 0, sizeof *c);
	c->launch = cand->launch;
	snprintf(c->role, sizeof c->role, "%s", cand->role);
	c->occurrence = ktrace_tm_occurrence(a, cand->launch);
	c->outcome = KTRACE_REPLAY_NOT_REPLAYABLE;
	if (ktrace_check_replay_spec(a, cand->launch, c->occurrence, (uint32_t)s->co->replays, spec_rank, spec,
				     sizeof spec, c->why, sizeof c->why)) {
		s->replay_runs--; /* no run made */
		return;
	}
	snprintf(what, sizeof what, "replay %d of at most %d, %s (launch %llu of run 1)", j, s->co->max_replays,
		 cand->role, (unsigned long long)cand->launch->seq);
	snprintf(prefix, sizeof prefix, "replay%d", j);
	struct run_plan p = { what, prefix, spec, NULL };
	if (!s->co->no_python_stack &&
	    !ktrace_check_pystack_spec(cand->launch, c->occurrence, pystack, sizeof pystack))
		p.pystack = pystack;
	if (run_command(s, &p, &st)) {
		snprintf(c->why, sizeof c->why, "the replay run could not be started");
		return;
	}
	read_replay_run(s, j, rank, c);
	if (!c->have_report && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		describe_status(st, how, sizeof how);
		snprintf(c->why, sizeof c->why, "the replay run failed (%s) before it recorded a verdict", how);
	}
}

/* The comparisons of rank index r: [r * (nruns - 1), (r + 1) * (nruns - 1)). */
static const struct diff_result *const *rank_results(const struct check_state *s, size_t r)
{
	return s->result_ptrs + r * (size_t)(s->co->nruns - 1);
}

/* Replay the divergent launches of rank index r until one is confirmed or
 * the runs allowed are spent.  0, or -1 out of memory. */
static int confirm_rank(struct check_state *s, size_t r)
{
	struct diff_confirmation *c = &s->confirm[r];
	size_t left = (size_t)(s->co->max_replays - s->replay_runs), n;
	struct check_candidate *cands;

	cands = ktrace_check_confirm_start(c, s->co->replays, s->co->max_replays, left);
	if (!cands) {
		ktrace_check_error("out of memory");
		return -1;
	}
	n = ktrace_check_candidates(rank_results(s, r), (size_t)(s->co->nruns - 1), cands, left);
	for (size_t i = 0; i < n && c->confirmed < 0 && s->replay_runs < s->co->max_replays; i++) {
		ktrace_check_replay_one(s, &s->traces[r], s->runs[1].t[r].rank, -1, &cands[i], &c->v[c->n]);
		if (c->v[c->n].outcome == KTRACE_REPLAY_CONFIRMED)
			c->confirmed = (long)c->n;
		c->n++;
	}
	free(cands);
	return 0;
}

/* Confirm the divergences, then let the confirmation decide each
 * comparison's status: 1 only for a confirmed divergence (or --strict's
 * reasons); nothing compared stays 2.  With --max-replays 0 the digests'
 * verdict stands.  0, or -1 out of memory. */
static int confirm_divergences(struct check_state *s)
{
	if (!s->co->max_replays)
		return 0;
	for (size_t r = 0; r < s->nranks; r++) {
		int diverged = 0;
		for (int k = 0; k < s->co->nruns - 1; k++)
			diverged |= rank_results(s, r)[k]->ndivs != 0;
		if (diverged && confirm_rank(s, r))
			return -1;
		for (int k = 0; k < s->co->nruns - 1; k++) {
			struct diff_result *res = &s->results[r * (size_t)(s->co->nruns - 1) + (size_t)k];
			if (!res->ndivs || res->status == 2)
				continue;
			res->confirm = &s->confirm[r];
			res->status = s->confirm[r].confirmed >= 0 || ktrace_diff_verdict(res) == DIFF_VERDICT_RACE
					      ? 1 : ktrace_diff_status_besides_divergences(res);
		}
	}
	return 0;
}

/* ---- reporting --------------------------------------------------------------------------------- */

/* The worst result, after the reports: 0 nothing confirmed diverged, 1
 * diverged, 2 nothing compared or a report failed. */
static int report(const struct check_state *s)
{
	char err[PATH_MAX + 256];
	int status = 0, unconfirmed = 0;
	struct diff_cli dc = s->co->diff;

	for (size_t i = 0; i < s->nresults; i++) {
		if (s->results[i].status > status)
			status = s->results[i].status;
		unconfirmed |= ktrace_diff_verdict(&s->results[i]) == DIFF_VERDICT_UNCONFIRMED;
	}
	dc.check_runs = s->co->nruns;
	dc.check_status = status;
	if (ktrace_diff_cli_report(&dc, s->result_ptrs, s->nresults, stdout, err, sizeof err)) {
		fprintf(stderr, "ktrace check: %s\n", err);
		status = 2;
	}
	for (size_t i = 0; i < s->nresults; i++)
		if (!ktrace_diff_compared(&s->results[i])) {
			char none[600];
			ktrace_diff_none_compared(s->results[i].launches_a, s->results[i].label_a, s->results[i].label_b,
						  none, sizeof none);
			fprintf(stderr, "ktrace check: nothing compared: %s\n", none);
		}
	if (unconfirmed && status == 0)
		fprintf(stderr, "ktrace check: note: digests differ, but no replay confirmed a non-deterministic "
				"kernel (see the report): exit status 0\n");
	return status;
}

/* Run, load, compare, confirm, report: the exit status. */
static int run_and_compare(struct check_state *s)
{
	s->runs = calloc((size_t)s->co->nruns + 1, sizeof *s->runs);
	if (!s->runs) {
		ktrace_check_error("out of memory");
		return 2;
	}
	if (run_all(s))
		return 2;
	s->nranks = s->runs[1].n;
	if (s->job) {
		if (ktrace_check_job_compare(s) || ktrace_check_job_confirm(s))
			return 2;
		s->compared = 1;
		return ktrace_check_job_report(s);
	}
	if (alloc_comparisons(s) || load_traces(s) || compare_runs(s) || confirm_divergences(s))
		return 2;
	s->compared = 1;
	return report(s);
}

static void check_state_free(struct check_state *s)
{
	for (size_t i = 0; i < s->nresults; i++)
		ktrace_diff_result_free(&s->results[i]);
	for (size_t i = 0; i < s->ntraces; i++)
		ktrace_tm_free(&s->traces[i]);
	for (size_t r = 0; s->confirm && r < s->nranks; r++)
		ktrace_check_confirmation_free(&s->confirm[r]);
	free(s->confirm);
	free(s->results);
	free(s->result_ptrs);
	free(s->labels);
	free(s->traces);
	free(s->runs);
	ktrace_check_job_free(s);
}

/* Any comparison whose digests differ, confirmed or not. */
static int any_divergence(const struct check_state *s)
{
	for (size_t i = 0; i < s->nresults; i++)
		if (s->results[i].ndivs)
			return 1;
	return ktrace_check_job_diverged(s);
}

/* A check that failed before it compared anything: every report asked for
 * says what failed (the errors printed).  Returns 2, the exit status. */
static int error_reports(const struct check_state *s)
{
	char err[PATH_MAX + 256];

	if (ktrace_check_error_report(&s->co->diff, s->co->nruns, s->cmdline,
				      check_errors[0] ? check_errors : "ktrace check failed", stdout, err, sizeof err))
		fprintf(stderr, "ktrace check: %s\n", err);
	return 2;
}

/* The command, argv[0..argc): the check's exit status. */
static int check_command(void *ctx, int argc, char **argv)
{
	struct check_opts *co = ctx;
	struct check_state s;
	char err[PATH_MAX + 256];
	int status, keep;

	if (!argc)
		return ktrace_cli_fail("ktrace check", "no command given (ktrace check [options] -- CMD ...)");
	co->cmd = argv;
	co->cmd_argc = argc;
	memset(&s, 0, sizeof s);
	s.co = co;
	s.jobs.confirmed_run = -1;
	s.job = s.job_dirs = ktrace_check_is_launcher(argv, argc);
	join_cmdline(co->cmd, co->cmd_argc, s.cmdline, sizeof s.cmdline);
	if (s.job && ktrace_check_job_report_options(co))
		return error_reports(&s);
	if (ktrace_find_lib(s.lib, sizeof s.lib, err, sizeof err)) {
		ktrace_check_error("%s", err);
		return error_reports(&s);
	}
	if (co->user_dir ? use_user_dir(co->user_dir, s.dir, sizeof s.dir) : make_temp_dir(s.dir, sizeof s.dir))
		return error_reports(&s);
	status = run_and_compare(&s);
	if (!s.compared)
		status = error_reports(&s);
	keep = co->user_dir || co->keep || status == 1 || any_divergence(&s);
	check_state_free(&s);
	/* kept when asked, and when the runs diverged (to look at them); an
	 * error already said its one line (--keep keeps a failed run's traces) */
	if (keep)
		fprintf(stderr, "ktrace check: traces kept in %s\n", s.dir);
	else
		remove_temp_dir(s.dir);
	return status;
}

/* the run file options are listed only to be refused with a reason */
static const struct option *const check_option_tables[] = { check_own_options, ktrace_cli_help_options,
							    ktrace_run_file_options, ktrace_run_trace_options,
							    ktrace_diff_report_options, NULL };
static const struct ktrace_cli_tool check_tool = {
	.name = "ktrace check", .version = "ktrace " KTRACE_VERSION, .usage = check_usage,
	.shortopts = "+:ho:", .options = check_option_tables, .option = check_option, .run = check_command,
};

int ktrace_cmd_check(int argc, char **argv)
{
	struct check_opts co;

	memset(&co, 0, sizeof co);
	co.nruns = 2;
	co.max_replays = DEFAULT_REPLAY_RUNS;
	co.replays = DEFAULT_REPLAYS;
	return ktrace_cli_main(&check_tool, &co, argc, argv);
}
