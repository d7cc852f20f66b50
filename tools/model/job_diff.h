/* tools/model/job_diff.h: the job-level diff of two runs of a distributed job,
 * as ktrace-diff and `ktrace check` call it (implemented in tools/diff/job_*.c).
 *
 * A run is a set of per-rank traces (a directory, or a list of files).  The
 * traces are grouped by rank (the JOB record's, else the HEADER's), rank k
 * of run A is paired with rank k of run B, and each pair is compared by the
 * single-process diff (model/diff.h), one rank at a time: only one rank's
 * two traces are loaded at once, and what the job verdict needs of them
 * (their NCCL operations, the digests of the collectives' buffers, their
 * first divergence) is kept.  The NCCL operations (COLL records) of every
 * rank are then matched across ranks, collectives by their communicator and
 * number on it, sends with receives by their pair of ranks and order, and
 * give the happens-before edges between ranks: the first divergence in that
 * causal order is the job's culprit (a rank's kernel, or a collective whose
 * inputs were identical on every rank while its outputs differ); every other
 * rank's first divergence is explained as downstream of the operation it
 * came through (docs/distributed.md).  Ranks that cannot be paired, or that
 * issued other collectives in the two runs, are findings.
 */
#ifndef KTRACE_TOOLS_MODEL_JOB_DIFF_H
#define KTRACE_TOOLS_MODEL_JOB_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/model/diff.h"

struct json_writer;

struct job_diff_opts {
	struct diff_opts diff;         /* each rank's comparison (--all, --strict; --partial: see below) */
	/* Truncated traces (a rank killed) are always read as far as they go;
	 * diff.allow_truncated makes them a warning instead of a finding. */
	const char *label_a, *label_b; /* the runs' names in reports */
};

/* The verdict of a job (the JSON "verdict"). */
enum job_verdict {
	JOB_VERDICT_IDENTICAL = 0,
	JOB_VERDICT_KERNEL_NONDET,      /* the culprit's inputs were identical on its rank */
	JOB_VERDICT_INPUTS_DIFFER,      /* the culprit's input differed (host data, or work not hashed) */
	JOB_VERDICT_INPUTS_UNVERIFIED,  /* the culprit's inputs could not all be compared */
	JOB_VERDICT_COLLECTIVE_NONDET,  /* a collective's inputs identical on every rank, its outputs differ */
	JOB_VERDICT_PROGRAM_RESULTS,    /* no launch diverged; what a rank copied to the host differs */
	JOB_VERDICT_RANKS_DIFFER,       /* no divergence, but findings: ranks missing, other collectives... */
	JOB_VERDICT_NOT_COMPARED,       /* the runs could not be compared */
};

/* What a rank's first divergence is in the job. */
enum job_role {
	JOB_ROLE_IDENTICAL = 0,   /* no divergence on this rank */
	JOB_ROLE_CULPRIT,         /* the first divergence in causal order */
	JOB_ROLE_INDEPENDENT,     /* a first divergence nothing of another rank explains, not the culprit */
	JOB_ROLE_DOWNSTREAM,      /* it follows from an NCCL operation that brought another rank's difference */
	JOB_ROLE_COLLECTIVE,      /* it is, or follows from, the culprit collective */
	JOB_ROLE_NOT_COMPARED,    /* the rank could not be compared */
};

/* An NCCL operation, as reports name it. */
struct job_op_ref {
	int valid;
	uint32_t op;              /* enum ktrace_coll_op */
	uint64_t comm_id;         /* in run A */
	uint64_t comm_seq;        /* its number on its communicator (on the rank named with it) */
	int32_t peer;             /* root, or a point-to-point peer (rank in the communicator); -1 none */
	int32_t nranks;
	uint64_t count;
	uint32_t datatype;
};

/* The first divergent launch of a rank (in run A's launch order), as the
 * rank's own diff found it. */
struct job_divergence {
	uint64_t seq_a, seq_b;    /* op_seq in A and B */
	char *kernel;             /* the name reports print */
	char *mangled;            /* the symbol ("" when the trace has no KERNEL record for it) */
	int kernel_known;         /* the trace has a KERNEL record for it */
	uint64_t occurrence;      /* launches of that symbol in A before it (KTRACE_REPLAY's occurrence) */
	int cls;                  /* enum diff_class */
	int nccl;                 /* a launch an NCCL operation became */
	struct job_op_ref op;     /* that operation (nccl) */
	char *summary;            /* the rank diff's sentence about it */
	char *detail;             /* the rank diff's text block of it */
};

struct job_rank {
	int32_t rank;
	char *path_a, *path_b;    /* NULL: no trace of this rank in that run */
	int truncated_a, truncated_b;
	int status;               /* the rank's comparison: 0, 1, 2; -1 not compared */
	uint64_t launches_a, launches_b, matched, only_a, only_b, unverified, diverged;
	uint64_t collectives_a, collectives_b; /* NCCL operations (COLL records, group ends aside) */
	int results_differ;       /* what the rank copied to the host differs */
	int has_div;
	struct job_divergence div;
	int role;                 /* enum job_role */
	struct job_op_ref via;    /* downstream: the operation the difference came through */
	int32_t via_rank;         /* ... bringing this rank's difference (-1: the collective itself) */
	char *explanation;        /* one sentence: why its first divergence is what it is */
};

enum job_finding_kind {
	JOB_FIND_WORLD_SIZE = 1,  /* the runs' jobs have different sizes: 2 */
	JOB_FIND_RANK_MISSING,    /* a rank in one run only: 1 */
	JOB_FIND_TRUNCATED,       /* a rank's trace ends early (killed): 1 (without --partial) */
	JOB_FIND_UNREADABLE,      /* a rank's trace cannot be read: 2 */
	JOB_FIND_DUPLICATE_RANK,  /* two traces of one run with launches claim a rank: 2 */
	JOB_FIND_COLLECTIVES,     /* a rank issued other NCCL operations in the two runs: 1 */
	JOB_FIND_NOTHING_COMPARED,/* a rank with launches whose comparison compared none: 2 */
	JOB_FIND_STRICT,          /* --strict: a rank's launches in one run only, unverified: 1 */
};

struct job_finding {
	int kind;                 /* enum job_finding_kind */
	int32_t rank;             /* -1: the job */
	int exit_code;            /* 1 a difference between the runs, 2 they cannot be compared */
	char text[768];
};

/* The collective found to be the culprit (JOB_VERDICT_COLLECTIVE_NONDET). */
struct job_collective {
	struct job_op_ref op;
	int inputs_compared;      /* every rank's input digests were recorded and identical (else causal order alone) */
	int32_t ranks_differing;  /* ranks whose output differs */
	char *version_a, *version_b;   /* NCCL's (COMM records; "" unknown) */
	char *settings_a, *settings_b; /* the NCCL_* settings */
	char *settings_differ;         /* "NCCL_ALGO (Ring in A, Tree in B)"..., "" when the same */
};

struct job_result {
	const char *label_a, *label_b;
	int status;               /* the exit status: 0 identical, 1 diverged or a finding, 2 cannot compare */
	int verdict;              /* enum job_verdict */
	int32_t world_a, world_b; /* ranks of each run's job (JOB world_size, else ranks found) */
	struct job_rank *ranks; size_t nranks;   /* by rank */
	long culprit;             /* index in ranks of the culprit's rank, -1 none */
	struct job_collective coll; /* the culprit collective, when the verdict says so */
	struct job_finding *findings; size_t nfindings;
	char **warnings; size_t nwarnings;
	uint64_t skipped_a, skipped_b;  /* traces without launches or JOB record (helper processes) */
	uint64_t coll_matched;    /* collectives matched across ranks (run A) */
	uint64_t p2p_matched;     /* sends matched with their receives (run A) */
	uint64_t digests_compared;/* collective buffer digests compared between the runs */
};

/* Compare two runs of a job: the traces paths_a[0..na) and paths_b[0..nb).
 * Returns 0 with *r filled (findings included: r->status says 0, 1 or 2),
 * or -1 with a one-line message (out of memory). */
int ktrace_job_diff(const char *const *paths_a, size_t na, const char *const *paths_b, size_t nb,
		    const struct job_diff_opts *o, struct job_result *r, char *err, size_t errlen);
void ktrace_job_result_free(struct job_result *r);

/* What r's status would be without its divergences (`ktrace check`
 * decides those by replay): the findings' (1 or 2), 1 when a rank's
 * program results differ, 2 when no rank was compared, else 0. */
int ktrace_job_status_besides_divergences(const struct job_result *r);

/* The trace files (*.ktrace) in dir and its subdirectories (a trace
 * directory gathered from several hosts), sorted by path: 0 with *paths
 * (malloc'd, each malloc'd) and *n, or -1 with a message. */
int ktrace_job_list_dir(const char *dir, char ***paths, size_t *n, char *err, size_t errlen);
void ktrace_job_paths_free(char **paths, size_t n);

/* "identical", "kernel_nondeterministic", "inputs_differ", "inputs_unverified",
 * "collective_nondeterministic", "program_results_differ", "ranks_differ",
 * "not_compared". */
const char *ktrace_job_verdict_name(int verdict);
/* "identical", "culprit", "independent", "downstream", "collective", "not_compared". */
const char *ktrace_job_role_name(int role);

/* The report of r as text on f, or JSON (docs/json.md, schema "job_diff"): on
 * f (one indented object), or as a value of w (`ktrace check` nests it).
 * culprit_diff, when not NULL, is the culprit rank's own comparison, whose
 * confirmation by replay (`ktrace check`) the report gives. */
void ktrace_job_report_text(FILE *f, const struct job_result *r, const struct diff_result *culprit_diff);
void ktrace_job_report_json(FILE *f, const struct job_result *r, const struct diff_result *culprit_diff);
void ktrace_job_json(struct json_writer *w, const struct job_result *r, const struct diff_result *culprit_diff);
/* `ktrace check --json` of a job (schema "check"): {"runs", "exit_code",
 * "comparisons": the culprit rank's comparison with its replays (none: []),
 * "jobs": run 1 against each other run}; jobs[culprit_in] is the one whose
 * culprit culprit_diff compares (-1 none). */
void ktrace_job_check_json(FILE *f, int runs, int exit_code, const struct job_result *jobs, size_t n,
			   const struct diff_result *culprit_diff, long culprit_in, const struct diff_opts *o);

#endif
