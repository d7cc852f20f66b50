/* tools/diff/job_internal.h: what the files of the job diff share
 * (tools/model/job_diff.h is what other tools call).
 *
 * job_collect.c finds the traces of each run and pairs them by rank;
 * job_ops.c reads a rank's NCCL operations out of its loaded trace (their
 * communicators, where they stand in its launch order, the digests of their
 * buffers) and pairs them between the runs; job_causal.c matches operations
 * across ranks and works out, from the happens-before edges they give, which
 * first divergence comes first and how the others follow from it;
 * job_diff.c runs it all, one rank's pair of traces at a time, and words
 * the verdict; job_report.c and job_json.c print it.
 */
#ifndef KTRACE_TOOLS_DIFF_JOB_INTERNAL_H
#define KTRACE_TOOLS_DIFF_JOB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tools/model/job_diff.h"

#define JOB_NO_POS UINT64_MAX

/* One NCCL operation of a rank in one run: a COLL record other than a group end. */
struct job_op {
	uint64_t coll_index, comm_id, comm_seq, count;
	uint32_t op, datatype, redop, tid;
	int32_t peer, comm_rank, comm_nranks;
	uint32_t comm_index;    /* its communicator among the rank's (struct job_side comms) */
	uint64_t nth;           /* a collective: its number among its communicator's collectives on the
	                         * rank; a send or receive: among the rank's to or from the same peer */
	uint64_t pos, last;     /* the op_seq of its first and last launch (pos: of the launch after it when
	                         * it made none; JOB_NO_POS: none after it) */
	int has_launches;
	uint64_t in, out;       /* digests of its send buffer before, its receive buffer after */
	uint64_t in_len, out_len; /* bytes hashed */
	uint8_t has_in, has_out;
	uint8_t in_place;       /* its send and receive buffer are one */
	long pair;              /* the same operation in the other run, -1 none */
};

/* A communicator a rank used, in the order it first appears in the trace. */
struct job_comm {
	uint64_t comm_id;
	int32_t comm_rank, nranks;
	char *version, *settings; /* of its COMM record ("" none) */
};

/* What the job diff keeps of one rank's trace in one run. */
struct job_side {
	struct job_op *ops; size_t nops;      /* by coll_index */
	struct job_comm *comms; size_t ncomms;
};

/* One rank as the job diff works on it, beside its struct job_rank. */
struct job_work {
	struct job_side a, b;
	uint64_t first_div;     /* op_seq in A of its first divergence, JOB_NO_POS none */
	long div_op;            /* the operation of A its first divergence is a launch of, -1 none */
	/* the causal model (job_causal.c) */
	uint64_t input_differs; /* pos in A of its first operation whose input differs by digest */
	long input_op;          /* that operation */
	uint64_t reached;       /* pos in A from which another rank's difference may reach it */
	long via_inst;          /* the instance that brought it */
	int32_t via_rank;       /* whose difference (rank index), -1 the collective itself */
	long via_op;            /* this rank's operation in that instance */
};

/* ---- traces and ranks (job_collect.c) ----------------------------------- */

/* Group the traces of both runs by rank into r->ranks (paths set, sorted by
 * rank), with the findings (world sizes, ranks missing, duplicates,
 * unreadable or truncated traces): a rank that cannot be compared (its
 * trace unreadable, or two claiming it) has status JOB_RANK_UNUSABLE.  0, or
 * -1 out of memory. */
#define JOB_RANK_UNUSABLE (-2)
int ktrace_job_pair_ranks(struct job_result *r, const char *const *pa, size_t na, const char *const *pb, size_t nb,
			  int partial, char *err, size_t errlen);
/* Add a finding (text printf-style): 0, or -1 out of memory. */
int ktrace_job_finding(struct job_result *r, int kind, int32_t rank, int exit_code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Add a warning: 0, or -1 out of memory. */
int ktrace_job_warning(struct job_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- a rank's NCCL operations (job_ops.c) ------------------------------- */

/* Read t's operations and communicators into s.  0, or -1 out of memory. */
int ktrace_job_read_ops(const struct tm_trace *t, struct job_side *s);
void ktrace_job_side_free(struct job_side *s);
/* The operation of s that launch l is a launch of (its range, or its group
 * end's, on its thread; or the call its collective buffers name), -1 none. */
long ktrace_job_op_of_launch(const struct job_side *s, const struct tm_launch *l);
/* Pair the operations of run A and B of rank index i (pair fields), and add a
 * finding when the rank issued other operations in the two runs.  0, or -1
 * out of memory. */
int ktrace_job_pair_ops(struct job_result *r, size_t i, struct job_work *w);
/* The operation as reports name it. */
struct job_op_ref ktrace_job_op_ref(const struct job_op *o);
/* "all_reduce #12 on communicator 0x5e1f" into buf. */
void ktrace_job_op_str(const struct job_op_ref *o, char *buf, size_t cap);
/* Whether o's input (its send buffer) and its output count on its rank:
 * a rooted operation's input only on its root (broadcast, scatter), its
 * output only there (reduce, gather); a send has no output, a receive no input. */
int ktrace_job_input_counts(const struct job_op *o);
int ktrace_job_output_counts(const struct job_op *o);

/* ---- causal order across ranks (job_causal.c) --------------------------- */

/* Match run A's operations across ranks, propagate differences along them,
 * and set every rank's role, via and the culprit (r->culprit, or r->coll for
 * a collective).  0, or -1 out of memory. */
int ktrace_job_causal(struct job_result *r, struct job_work *w);

#endif
