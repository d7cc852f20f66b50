/* test/unit/job_sim.h: synthetic traces of distributed jobs, for the job diff's
 * tests (ktgen --job, job_diff_test, diff_truth_test's jobs, job_fakeprog).
 *
 * job_sim.c runs a small program on every rank of a fake job: each rank
 * has buffers holding a 64-bit "content"; a compute step's kernel derives
 * its output from its inputs, and NCCL operations move contents between
 * ranks as NCCL would (an all-reduce sums every rank's input, a broadcast
 * copies the root's, a send lands in its receiver's buffer).  Each rank's
 * trace is written as libktrace.so writes one: HEADER and JOB (its rank),
 * COMM records of its communicators (their identity different in each run,
 * as NCCL's unique ids are), KERNEL, ALLOC, LAUNCH records whose digests are
 * the buffers' contents, a COLL record after each NCCL operation's launch,
 * whose send and receive buffers are regions flagged coll_buffer.  Run B
 * differs where the program plants it: a non-deterministic kernel on one
 * rank, a non-deterministic collective (every rank's result perturbed the
 * same way, as another NCCL_ALGO does), different host data on one rank.
 */
#ifndef KTRACE_TEST_JOB_SIM_H
#define KTRACE_TEST_JOB_SIM_H

#include <stddef.h>
#include <stdint.h>

#define JSIM_MAX_RANKS 8
#define JSIM_MAX_COMMS 8
#define JSIM_MAX_STEPS 96
#define JSIM_NBUF 6

enum jsim_kind {
	JSIM_COMPUTE = 1,   /* a kernel on each rank of `ranks`: buf_out from buf_in[0], buf_in[1] */
	JSIM_HOST_COPY = 2, /* a host-to-device copy into buf_out on each rank of `ranks` */
	JSIM_COLL = 3,      /* NCCL operation `op` on communicator `comm` (root: its comm rank) */
	JSIM_SENDRECV = 4,  /* rank src sends buf_in[0] to rank dst's buf_out on communicator `comm` */
};

struct jsim_step {
	int kind, op, comm, root, src, dst, kernel;
	uint32_t ranks;     /* compute, host copy: a bit per rank (0: every rank) */
	int buf_out, buf_in[2];
};

struct jsim_comm {
	int n;
	int members[JSIM_MAX_RANKS]; /* global ranks, by comm rank */
};

struct jsim_program {
	int nranks, ncomms, nsteps;
	struct jsim_comm comms[JSIM_MAX_COMMS];
	struct jsim_step steps[JSIM_MAX_STEPS];
	/* what run B changes */
	int nondet_step, nondet_rank;   /* a compute step whose output on that rank differs (-1 none) */
	int coll_nondet_step;           /* a collective whose result differs on every rank (-1 none) */
	int host_step, host_rank;       /* a host copy whose data differ on that rank (-1 none) */
	const char *settings_a, *settings_b; /* NCCL_* settings of the COMM records */
};

/* How one run is written. */
struct jsim_run {
	int run_b;
	int omit_rank;         /* this rank writes no trace (-1 none) */
	int world_ranks;       /* ranks written (0: all), as the JOB records' world size */
	int extra_coll_rank;   /* this rank makes one more all_reduce at the end (-1 none) */
	int truncate_rank;     /* this rank's trace is cut after half its steps (-1 none) */
	int no_coll_digests;   /* NCCL launches carry no coll_buffer regions */
	int hosts;             /* ranks spread over this many subdirectories node<k> (0, 1: none) */
	const void *last_record; /* a record appended to every trace written, before its END (NULL none) */
	size_t last_record_len;
};

/* The program of the scenarios, empty: n ranks on one communicator of all. */
void jsim_init(struct jsim_program *p, int nranks);
int jsim_comm(struct jsim_program *p, int n, const int *members);   /* its index */
void jsim_compute(struct jsim_program *p, uint32_t ranks, int kernel, int out, int in0, int in1);
void jsim_host_copy(struct jsim_program *p, uint32_t ranks, int out);
void jsim_coll(struct jsim_program *p, int op, int comm, int root, int out, int in);
void jsim_sendrecv(struct jsim_program *p, int comm, int src, int dst, int out, int in);
/* The index of the step added last. */
int jsim_last(const struct jsim_program *p);

/* A random program (the truth test): 2 to 6 ranks, a communicator of all
 * and some of fewer, compute, collectives and sends; one non-deterministic
 * kernel planted on a random rank, or (planted_coll) a non-deterministic
 * collective. */
void jsim_random(struct jsim_program *p, uint64_t seed, int planted_coll);

/* Write run o of p into dir (made if needed) as <dir>[/node<k>]/r<rank>-p<pid>.ktrace.
 * 0, or -1 with a message. */
int jsim_write(const char *dir, const struct jsim_program *p, const struct jsim_run *o, char *err, size_t errlen);
/* Write only rank `rank`'s trace of run o to path (job_fakeprog: one process per rank). */
int jsim_write_rank(const char *path, const struct jsim_program *p, const struct jsim_run *o, int rank, char *err,
		    size_t errlen);
void jsim_run_defaults(struct jsim_run *o, int run_b);

/* The ground truth of p (run A against run B, the NCCL launches with their
 * buffers' digests unless no_coll_digests): the first launch whose output
 * differs on each rank (op_seq, -1 none), and its kernel's name. */
struct jsim_truth {
	int64_t first_div[JSIM_MAX_RANKS];
	const char *kernel[JSIM_MAX_RANKS];
};
void jsim_truth(const struct jsim_program *p, int no_coll_digests, struct jsim_truth *t);

#endif
