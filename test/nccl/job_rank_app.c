/* test/nccl/job_rank_app.c: one rank of a small data-parallel step, for the
 * end-to-end `ktrace check` test of a job (test/nccl/job_e2e_test.c).
 *
 *   job_rank_app [--planted]
 *
 * Started by build/job_launch (test/nccl/job_launch.c), which sets RANK,
 * WORLD_SIZE and JOB_ID_FILE (the file through which rank 0 hands the NCCL
 * unique id to the others).  Runs on the fake driver with real memory
 * (build/fakecuda-real) and the fake NCCL (build/fakenccl/libnccl.so.2),
 * under LD_PRELOAD=libktrace.so or not.  On one stream:
 *   1. in = an input whose float sum depends on the order of the additions
 *      (the same on every rank but for a rank offset), copied to the device;
 *   2. the gradient g (N floats, a copy of in): with --planted, rank 1 runs
 *      fake_nondet_sum(g, in, N) (g[0] = the sum of in, in an order that
 *      changes from launch to launch); every other rank, and rank 1 without
 *      --planted, runs fake_add_one(g, N) (deterministic);
 *   3. ncclAllReduce(g -> r, N floats, sum);
 *   4. fake_add_one(r, N) on every rank;
 *   5. r copied back, its KT64 digest printed ("out all_reduce DIGEST"), the
 *      communicator destroyed, "OK".
 * Run to run, the planted sum must differ: FAKECUDA_NONDET_SEED is set before
 * the first launch to the run number the launcher passes (JOB_RUN), else to
 * the pid, so each run of the job sums in its own order; a replay of the
 * launch in one process sums in another order at each replay (the fake's
 * launch counter).  Exit status 0 when every call succeeded.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "hashkern/ktrace_digest.h"
#include "test/fakenccl/fakenccl.h"
#include "test/nccl/share_id.h"

#define N 64

#define CHECK(cond, what)                                                                         \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "job_rank_app: rank %d: %s failed\n", rank, what);       \
			exit(3);                                                                  \
		}                                                                                 \
	} while (0)

static int rank = -1;
static CUmodule mod;
static CUstream st;

static void launch(const char *name, void **params)
{
	CUfunction f;

	CHECK(cuModuleGetFunction(&f, mod, name) == CUDA_SUCCESS, name);
	CHECK(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, st, params, NULL) == CUDA_SUCCESS, name);
}

static void add_one(CUdeviceptr x)
{
	int n = N;
	void *params[] = { &x, &n };

	launch("fake_add_one", params);
}

static void nondet_sum(CUdeviceptr out, CUdeviceptr in)
{
	int n = N;
	void *params[] = { &out, &in, &n };

	launch("fake_nondet_sum", params);
}

/* Values whose float sum depends on the order of the additions. */
static void fill_input(float *in)
{
	for (int i = 0; i < N; i++) {
		float mag = 1.0f;

		for (int k = 0; k < i % 9; k++)
			mag *= 10.0f;
		in[i] = (i % 2 ? -1.0f : 1.0f) * mag * 1e-3f * (1.0f + (float)i / 7.0f) + (float)rank;
	}
}

static CUdeviceptr device_copy(const float *v, size_t n)
{
	CUdeviceptr d;

	CHECK(cuMemAlloc_v2(&d, n * sizeof(float)) == CUDA_SUCCESS, "cuMemAlloc");
	CHECK(cuMemcpyHtoD_v2(d, v, n * sizeof(float)) == CUDA_SUCCESS, "cuMemcpyHtoD");
	return d;
}

#define P(d) ((void *)(uintptr_t)(d))

int main(int argc, char **argv)
{
	static const char image[] = "not a real cubin";
	const char *rs = getenv("RANK"), *ws = getenv("WORLD_SIZE"), *idfile = getenv("JOB_ID_FILE");
	const char *run = getenv("JOB_RUN");
	int planted = argc > 1 && !strcmp(argv[1], "--planted"), nranks;
	float in[N], back[N];
	char seed[32];
	ncclUniqueId id;
	ncclComm_t comm = NULL;
	CUcontext ctx;
	CUdeviceptr din, g, r;

	if (!rs || !ws || !idfile || (rank = atoi(rs)) < 0 || (nranks = atoi(ws)) < 1 || rank >= nranks ||
	    (argc > 1 && !planted)) {
		fprintf(stderr, "usage: RANK=R WORLD_SIZE=N JOB_ID_FILE=PATH job_rank_app [--planted]\n");
		return 2;
	}
	/* before the first launch: the fake driver reads it at each launch */
	snprintf(seed, sizeof seed, "%ld", run && *run ? atol(run) : (long)getpid());
	setenv("FAKECUDA_NONDET_SEED", seed, 1);
	fill_input(in);
	CHECK(cuInit(0) == CUDA_SUCCESS, "cuInit");
	CHECK(cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS, "cuDevicePrimaryCtxRetain");
	CHECK(cuCtxPushCurrent_v2(ctx) == CUDA_SUCCESS, "cuCtxPushCurrent");
	CHECK(cuStreamCreate(&st, 0) == CUDA_SUCCESS, "cuStreamCreate");
	CHECK(cuModuleLoadData(&mod, image) == CUDA_SUCCESS, "cuModuleLoadData");
	din = device_copy(in, N);
	g = device_copy(in, N);
	r = device_copy(in, N);
	CHECK(nccl_share_id(rank, idfile, &id, 60000) == 0, "sharing the unique id");
	CHECK(ncclCommInitRank(&comm, nranks, id, rank) == ncclSuccess, "ncclCommInitRank");
	if (planted && rank == 1)
		nondet_sum(g, din);
	else
		add_one(g);
	CHECK(ncclAllReduce(P(g), P(r), N, ncclFloat32, ncclSum, comm, st) == ncclSuccess, "ncclAllReduce");
	add_one(r);
	CHECK(cuStreamSynchronize(st) == CUDA_SUCCESS, "cuStreamSynchronize");
	CHECK(cuMemcpyDtoH_v2(back, r, sizeof back) == CUDA_SUCCESS, "cuMemcpyDtoH");
	printf("out all_reduce %016llx\n", (unsigned long long)ktrace_digest(back, sizeof back));
	CHECK(ncclCommDestroy(comm) == ncclSuccess, "ncclCommDestroy");
	cuMemFree_v2(din);
	cuMemFree_v2(g);
	cuMemFree_v2(r);
	puts("OK");
	return 0;
}
