/* tools/cli/check_internal.h: what the files of `ktrace check` share.
 *
 * ktrace_check.c reads the command line, runs the command (the warm-up, the
 * traced runs, the replay runs), compares one process's runs rank by rank
 * and confirms their divergences; check_job.c does the comparing and
 * confirming for a distributed job (a launcher's command, or processes
 * whose JOB records say they are ranks of a job of several): each run's
 * traces in a directory of its own, one job verdict (model/job_diff.h),
 * the culprit confirmed by replaying it on its rank alone.
 */
#ifndef KTRACE_TOOLS_CLI_CHECK_INTERNAL_H
#define KTRACE_TOOLS_CLI_CHECK_INTERNAL_H

#include <limits.h>
#include <stdint.h>

#include "tools/cli/check_confirm.h"
#include "tools/cli/ktrace_cli.h"
#include "tools/model/diff.h"
#include "tools/model/job_diff.h"

#define MAX_RUNS 100
#define MAX_TRACES 64 /* traced processes with launches, per run (ranks of a job included) */

struct run_trace {
	char path[PATH_MAX + 320];
	uint32_t rank;
	int32_t world_size;       /* its JOB record's, -1 none */
	long launches;
	long graphs_memory_nodes; /* graphs not hashed: memory allocated inside them */
};

struct run_info {
	struct run_trace t[MAX_TRACES];
	size_t n;
};

/* What the command line asks for. */
struct check_opts {
	struct ktrace_run_opts run;
	struct diff_cli diff;
	int nruns, keep, no_warmup;
	int no_python_stack;  /* replay runs take no Python stacks */
	int max_replays;      /* runs to confirm divergences by replay (0: none) */
	int replays;          /* K, replays per such run */
	const char *user_dir; /* --dir, or NULL */
	char **cmd;	      /* the command line to run, NULL-terminated */
	int cmd_argc;
};

/* A distributed job's comparisons (check_job.c). */
struct check_job {
	struct job_result *results;  /* run 1 against run k: [k - 2] */
	size_t nresults;
	char labels[MAX_RUNS + 1][16]; /* "run k": run k's name in results[k - 2] */
	long confirmed_run;          /* the comparison whose culprit was replayed (index), -1 none */
	struct tm_trace culprit_a, culprit_b; /* the culprit rank's traces in run 1 and that run */
	int loaded;                  /* both loaded */
	struct diff_result culprit;  /* their comparison, with the replays (culprit.confirm) */
	char culprit_labels[2][48];  /* "run 1 rank R", "run k rank R" */
	int compared;
	struct diff_confirmation confirm;
};

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
	struct diff_result *results; /* run 1 against run k, per rank: [r * (nruns - 1) + k - 2] */
	const struct diff_result **result_ptrs;
	size_t nresults;
	struct diff_confirmation *confirm; /* per rank index */
	int replay_runs;	  /* runs made to confirm so far */
	int own_allocator;	  /* the program failed under ktrace's allocator settings: keep its own */
	int compared;		  /* the runs were compared: the reports are the comparisons' */
	int job;		  /* a distributed job: one verdict for all ranks (check_job.c) */
	int job_dirs;		  /* each run's traces in DIR/<prefix>/ (a job's) */
	struct check_job jobs;
};

/* One run of CMD: traced into DIR/<prefix>-r%r-p%p.ktrace, or for a job
 * DIR/<prefix>/r%r-p%p.ktrace (prefix NULL: untraced, the environment as
 * given but for the allocator settings and the Python start-up hook, the
 * same in every run), with KTRACE_REPLAY=replay when given (and hashing off:
 * a replay run needs no digests) and KTRACE_PYSTACK=pystack when given. */
struct run_plan {
	const char *what;   /* "run 2 of 3", for messages */
	const char *prefix; /* "run2", "replay1"; NULL: untraced */
	const char *replay; /* KTRACE_REPLAY, or NULL */
	const char *pystack; /* KTRACE_PYSTACK, or NULL */
};

/* ---- ktrace_check.c ------------------------------------------------------- */

/* An error: "ktrace check: <message>" on stderr, and kept for the reports of
 * a check that fails before comparing. */
void ktrace_check_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Replay candidate cand, a launch of trace a (the process of rank `rank`),
 * in one more run of CMD (the whole job, with rank=R in KTRACE_REPLAY when
 * spec_rank >= 0): c gets the verdict that rank's trace records. */
void ktrace_check_replay_one(struct check_state *s, const struct tm_trace *a, uint32_t rank, int32_t spec_rank,
			     const struct check_candidate *cand, struct diff_confirm *c);

/* ---- check_job.c ------------------------------------------------------------ */

/* CMD is a launcher of distributed jobs: torchrun, python -m
 * torch.distributed.run (or .launch), mpirun, mpiexec, orterun, srun. */
int ktrace_check_is_launcher(char **cmd, int argc);
/* 0 when the report options asked for suit a job's verdict, -1 (said) for
 * --junit, --markdown, --github and --perfetto: one process's comparison's. */
int ktrace_check_job_report_options(const struct check_opts *co);
/* A run's traces say they are ranks of a job of several (JOB world size > 1). */
int ktrace_check_ranks_of_job(const struct run_info *ri);
/* Move the traces DIR/<prefix>-*.ktrace into DIR/<prefix>/ (a job found in
 * run 1 after it ran): 0, or -1 with the error said. */
int ktrace_check_job_adopt(const struct check_state *s, const char *prefix);
/* The job's runs compared, their culprit confirmed, the reports; each 0, or
 * -1 with the error said (job_report: the exit status). */
int ktrace_check_job_compare(struct check_state *s);
int ktrace_check_job_confirm(struct check_state *s);
int ktrace_check_job_report(const struct check_state *s);
void ktrace_check_job_free(struct check_state *s);
/* Any comparison of the job whose runs differ. */
int ktrace_check_job_diverged(const struct check_state *s);

#endif
