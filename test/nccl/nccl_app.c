/* test/nccl/nccl_app.c: one rank of an NCCL program, for test/nccl/nccl_test.c.
 *
 *   nccl_app RANK NRANKS IDFILE
 *
 * Runs on the fake driver with real memory (build/fakecuda-real) and the
 * fake NCCL (build/fakenccl/libnccl.so.2), under LD_PRELOAD=libktrace.so or
 * not.  Rank 0 makes the unique id and writes it to IDFILE; the others read
 * it from there.  Rank r's input is A[i] = 100 r + i (N floats).  In order,
 * every call on one stream, its result printed as "rc NAME CODE":
 *   init        ncclCommInitRank
 *   all_reduce  sum of A into B                      (ungrouped)
 *   broadcast   rank 0's A into C                    (ungrouped)
 *   all_gather, reduce_scatter  in one group: A into G (N per rank); S into D,
 *               S[j] = A[j % N] + j / N (N n floats)
 *   send, recv  in one group: A to rank r+1, from rank r-1 into E (a ring)
 *   split       ncclCommSplit color 0, key NRANKS - r (the ranks reversed)
 *   sub_all_reduce  max of A in place, on the split communicator
 *   bad_type    ncclAllReduce with data type 99 (ncclInvalidArgument)
 *   no_comm     ncclAllReduce without a communicator (ncclInvalidArgument)
 *   split_nb    ncclCommSplit with a non-blocking configuration (ncclInProgress)
 *   destroy_nb, destroy_sub, finalize, destroy
 * then "out NAME DIGEST" for B, C, G, D, E and A, each the KT64 digest of
 * the buffer's bytes, and "OK".  Exit status 0 when every call returned what
 * NCCL should have (1 otherwise).
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

static int ok = 1;

static void expect(const char *name, ncclResult_t got, ncclResult_t want)
{
	printf("rc %s %d\n", name, (int)got);
	if (got != want)
		ok = 0;
}

static CUdeviceptr device_floats(size_t n)
{
	CUdeviceptr d = 0;

	if (cuMemAlloc_v2(&d, n * sizeof(float)) != CUDA_SUCCESS)
		ok = 0;
	return d;
}

static void put(CUdeviceptr d, const float *v, size_t n)
{
	if (cuMemcpyHtoD_v2(d, v, n * sizeof(float)) != CUDA_SUCCESS)
		ok = 0;
}

static void print_digest(const char *name, CUdeviceptr d, size_t n)
{
	float *v = calloc(n, sizeof(float));

	if (!v || cuMemcpyDtoH_v2(v, d, n * sizeof(float)) != CUDA_SUCCESS)
		ok = 0;
	else
		printf("out %s %016llx\n", name, (unsigned long long)ktrace_digest(v, n * sizeof(float)));
	free(v);
}

struct bufs {
	CUdeviceptr a, b, c, g, s, d, e;
};

static void make_bufs(struct bufs *m, int rank, int nranks)
{
	float a[N], *s = calloc((size_t)N * (size_t)nranks, sizeof(float));

	for (int i = 0; i < N; i++)
		a[i] = (float)(100 * rank + i);
	for (int j = 0; s && j < N * nranks; j++)
		s[j] = a[j % N] + (float)(j / N);
	m->a = device_floats(N);
	m->b = device_floats(N);
	m->c = device_floats(N);
	m->g = device_floats((size_t)N * (size_t)nranks);
	m->s = device_floats((size_t)N * (size_t)nranks);
	m->d = device_floats(N);
	m->e = device_floats(N);
	put(m->a, a, N);
	if (s)
		put(m->s, s, (size_t)N * (size_t)nranks);
	else
		ok = 0;
	free(s);
}

#define P(d) ((void *)(uintptr_t)(d))

/* The operations on comm: two ungrouped, two groups. */
static void operations(ncclComm_t comm, const struct bufs *m, int rank, int nranks, CUstream st)
{
	expect("all_reduce", ncclAllReduce(P(m->a), P(m->b), N, ncclFloat32, ncclSum, comm, st), ncclSuccess);
	expect("broadcast", ncclBroadcast(P(m->a), P(m->c), N, ncclFloat32, 0, comm, st), ncclSuccess);
	expect("group_start", ncclGroupStart(), ncclSuccess);
	expect("all_gather", ncclAllGather(P(m->a), P(m->g), N, ncclFloat32, comm, st), ncclSuccess);
	expect("reduce_scatter", ncclReduceScatter(P(m->s), P(m->d), N, ncclFloat32, ncclSum, comm, st), ncclSuccess);
	expect("group_end", ncclGroupEnd(), ncclSuccess);
	expect("group_start", ncclGroupStart(), ncclSuccess);
	expect("send", ncclSend(P(m->a), N, ncclFloat32, (rank + 1) % nranks, comm, st), ncclSuccess);
	expect("recv", ncclRecv(P(m->e), N, ncclFloat32, (rank + nranks - 1) % nranks, comm, st), ncclSuccess);
	expect("group_end", ncclGroupEnd(), ncclSuccess);
}

/* The split, its operation, the errors, the non-blocking split, the ends. */
static void splits_and_ends(ncclComm_t comm, const struct bufs *m, int rank, int nranks, CUstream st)
{
	ncclComm_t sub = NULL, nb = NULL;
	ncclConfig_t cfg;

	memset(&cfg, 0, sizeof cfg);
	cfg.size = sizeof cfg;
	cfg.magic = NCCL_API_MAGIC;
	cfg.version = FAKENCCL_VERSION;
	cfg.blocking = 0;
	expect("split", ncclCommSplit(comm, 0, nranks - rank, &sub, NULL), ncclSuccess);
	expect("sub_all_reduce", ncclAllReduce(P(m->a), P(m->a), N, ncclFloat32, ncclMax, sub, st), ncclSuccess);
	expect("bad_type", ncclAllReduce(P(m->a), P(m->b), N, (ncclDataType_t)99, ncclSum, comm, st),
	       ncclInvalidArgument);
	expect("no_comm", ncclAllReduce(P(m->a), P(m->b), N, ncclFloat32, ncclSum, NULL, st), ncclInvalidArgument);
	expect("split_nb", ncclCommSplit(comm, 5, rank, &nb, &cfg), ncclInProgress);
	expect("destroy_nb", ncclCommDestroy(nb), ncclSuccess);
	expect("destroy_sub", ncclCommDestroy(sub), ncclSuccess);
	expect("finalize", ncclCommFinalize(comm), ncclSuccess);
	expect("destroy", ncclCommDestroy(comm), ncclSuccess);
}

int main(int argc, char **argv)
{
	int rank, nranks;
	ncclUniqueId id;
	ncclComm_t comm = NULL;
	CUcontext ctx;
	CUstream st = NULL;
	struct bufs m;

	if (argc != 4 || (rank = atoi(argv[1])) < 0 || (nranks = atoi(argv[2])) < 1 || rank >= nranks) {
		fprintf(stderr, "usage: nccl_app RANK NRANKS IDFILE\n");
		return 2;
	}
	if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
	    cuCtxPushCurrent_v2(ctx) != CUDA_SUCCESS || cuStreamCreate(&st, 0) != CUDA_SUCCESS)
		return 1;
	make_bufs(&m, rank, nranks);
	if (nccl_share_id(rank, argv[3], &id, 30000) != 0)
		return 1;
	expect("init", ncclCommInitRank(&comm, nranks, id, rank), ncclSuccess);
	if (!ok)
		return 1;
	operations(comm, &m, rank, nranks, st);
	splits_and_ends(comm, &m, rank, nranks, st);
	print_digest("all_reduce", m.b, N);
	print_digest("broadcast", m.c, N);
	print_digest("all_gather", m.g, (size_t)N * (size_t)nranks);
	print_digest("reduce_scatter", m.d, N);
	print_digest("recv", m.e, N);
	print_digest("sub_all_reduce", m.a, N);
	puts(ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
