/* test/tools/ktgen_job.c: ktgen --job SCENARIO DIR, two runs of a fake
 * distributed job written as per-rank traces into DIR/a and DIR/b (the job
 * diff's golden cases, test/unit/job_diff_test.c), by the job simulator
 * test/unit/job_sim.c.
 *
 *   job-identical    4 ranks: compute, an all-reduce, a broadcast; both runs alike
 *   job-nondet       rank 1's k_norm is non-deterministic before the all-reduce:
 *                    every rank diverges after it
 *   job-causal       the same, the NCCL launches without buffer digests
 *                    (causal order alone)
 *   job-coll-nondet  the all-reduce's result differs on every rank, its
 *                    inputs identical; NCCL_ALGO Ring in A, Tree in B
 *   job-host-input   rank 2 copies other host data into the all-reduce's input
 *   job-sendrecv     a pipeline of 4 ranks (send/recv), rank 1's kernel
 *                    non-deterministic: ranks 2 and 3 downstream, rank 0 not
 *   job-two-comms    tensor-parallel pairs {0,1} {2,3} inside data-parallel
 *                    pairs {0,2} {1,3}, ranks on two hosts (node0/, node1/);
 *                    rank 2's kernel non-deterministic
 *   job-coll-mismatch  rank 2 makes one more all-reduce in run B
 *   job-missing-rank   run B has no trace of rank 3
 *   job-world-size     run B is a job of 2 ranks
 *   job-truncated      job-nondet, rank 3's trace in run B cut short
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "format/ktrace_format.h"
#include "test/unit/job_sim.h"

int ktgen_job(const char *scenario, const char *dir);

/* host data, two kernels, the all-reduce, then a broadcast and more kernels */
static void allreduce_program(struct jsim_program *p)
{
	jsim_init(p, 4);
	jsim_host_copy(p, 0, 0);
	jsim_compute(p, 0, 0, 1, 0, 0);        /* k_gemm */
	jsim_compute(p, 0, 2, 2, 1, 0);        /* k_norm */
	jsim_coll(p, KTRACE_COLL_ALL_REDUCE, 0, -1, 3, 2);
	jsim_compute(p, 0, 1, 4, 3, 0);        /* k_bias */
	jsim_coll(p, KTRACE_COLL_BROADCAST, 0, 0, 5, 4);
	jsim_compute(p, 0, 3, 1, 5, 4);        /* k_act */
}

static void sendrecv_program(struct jsim_program *p)
{
	jsim_init(p, 4);
	jsim_compute(p, 1u << 0, 0, 1, 0, 0);
	for (int g = 1; g < 4; g++) {
		jsim_sendrecv(p, 0, g - 1, g, 2, 1);
		jsim_compute(p, 1u << g, 2, 1, 2, 0);
	}
}

static void two_comms_program(struct jsim_program *p)
{
	static const int tp0[] = { 0, 1 }, tp1[] = { 2, 3 }, dp0[] = { 0, 2 }, dp1[] = { 1, 3 };

	jsim_init(p, 4);
	int t0 = jsim_comm(p, 2, tp0), t1 = jsim_comm(p, 2, tp1), d0 = jsim_comm(p, 2, dp0), d1 = jsim_comm(p, 2, dp1);
	jsim_compute(p, 0, 0, 1, 0, 0);
	jsim_coll(p, KTRACE_COLL_ALL_REDUCE, t0, -1, 2, 1);
	jsim_coll(p, KTRACE_COLL_ALL_REDUCE, t1, -1, 2, 1);
	jsim_compute(p, 0, 1, 3, 2, 0);
	jsim_coll(p, KTRACE_COLL_ALL_REDUCE, d0, -1, 4, 3);
	jsim_coll(p, KTRACE_COLL_ALL_REDUCE, d1, -1, 4, 3);
	jsim_compute(p, 0, 3, 5, 4, 0);
}

/* The program of scenario, and how run B is written. */
static int plan(const char *sc, struct jsim_program *p, struct jsim_run *a, struct jsim_run *b)
{
	jsim_run_defaults(a, 0);
	jsim_run_defaults(b, 1);
	if (!strcmp(sc, "job-sendrecv")) {
		sendrecv_program(p);
		p->nondet_step = 2, p->nondet_rank = 1;
		return 0;
	}
	if (!strcmp(sc, "job-two-comms")) {
		two_comms_program(p);
		p->nondet_step = 0, p->nondet_rank = 2;
		a->hosts = b->hosts = 2;
		return 0;
	}
	allreduce_program(p);
	if (!strcmp(sc, "job-nondet") || !strcmp(sc, "job-causal") || !strcmp(sc, "job-truncated"))
		p->nondet_step = 2, p->nondet_rank = 1;
	if (!strcmp(sc, "job-causal"))
		a->no_coll_digests = b->no_coll_digests = 1;
	if (!strcmp(sc, "job-truncated"))
		b->truncate_rank = 3;
	if (!strcmp(sc, "job-coll-nondet"))
		p->coll_nondet_step = 3, p->settings_b = "NCCL_ALGO=Tree NCCL_PROTO=Simple";
	if (!strcmp(sc, "job-host-input"))
		p->host_step = 0, p->host_rank = 2;
	if (!strcmp(sc, "job-coll-mismatch"))
		b->extra_coll_rank = 2;
	if (!strcmp(sc, "job-missing-rank"))
		b->omit_rank = 3;
	if (!strcmp(sc, "job-world-size"))
		b->world_ranks = 2;
	static const char *const known[] = { "job-identical", "job-nondet", "job-causal", "job-truncated",
					     "job-coll-nondet", "job-host-input", "job-coll-mismatch",
					     "job-missing-rank", "job-world-size" };
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (!strcmp(sc, known[i]))
			return 0;
	return -1;
}

int ktgen_job(const char *scenario, const char *dir)
{
	struct jsim_program p;
	struct jsim_run a, b;
	char sub[4096], err[512];

	if (plan(scenario, &p, &a, &b)) {
		fprintf(stderr, "ktgen: unknown job scenario '%s'\n", scenario);
		return 1;
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "ktgen: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	snprintf(sub, sizeof sub, "%s/a", dir);
	if (jsim_write(sub, &p, &a, err, sizeof err) == 0) {
		snprintf(sub, sizeof sub, "%s/b", dir);
		if (jsim_write(sub, &p, &b, err, sizeof err) == 0)
			return 0;
	}
	fprintf(stderr, "ktgen: %s\n", err);
	return 1;
}
