// test/gpu/graph_conditional.cu: a CUDA graph whose work runs inside a WHILE
// conditional node, as XLA runs lax.fori_loop / lax.scan, for
// test/gpu/70-graphs-3-conditional.sh.
//
// The graph (built node by node, cudaGraphAddNode for the conditional node):
//   memset        iter = 0
//   WHILE (handle default 1, assigned at each launch) {
//     kt_gc_step      x = x / 2 + 1/(1 + x^2)                 (deterministic)
//     kt_gc_tally     tally[i] += 1 for i < n, n = 1: an int parameter equal to
//                     the handle's value (the driver numbers handles 1, 2, ...
//                     per graph), which ktrace's copy of the graph must pass as
//                     it is (tally[0] counts the runs, tally[1] stays 0)
//     memset          sums = 0
//     the sums of x per bin: kt_g_block_sum + kt_g_final_sum, or with --plant
//                     kt_g_atomic_sum (float atomics: non-deterministic)
//     kt_gc_record    out[iter * 4 + b] = sums[b]
//     kt_gc_loop_cond iter += 1; condition = iter < ITERS     (cudaGraphSetConditional)
//   }
// launched LAUNCHES times on one stream.  Options: --plant, --iters N (default
// 12), --launches N (default 10), --plant-top: before the WHILE node, at the
// top level of the graph, memset topsums = 0 and kt_g_atomic_sum of topx
// into topsums (a non-deterministic kernel node outside the loop's body, as
// XLA puts kernels beside a loop in one command buffer; topx holds random
// values no node changes: x converges to one value in every element, whose
// sums no order changes).
//
// Prints the lines of graph_common.cuh (COUNT, EXPECT, EAGER, OUTPUT), and
//   ITERS <n>             the runs of the loop body per graph launch
//   HANDLE <n>            the loop's condition handle (1 on the driver)
//   GRAPH_COPIES memcpy=0 memset=<n>  the memset nodes run: one per launch, one
//                         per run of the body
//   LAUNCHES <n>          graph launches
//   graph_conditional mode=<det|plant> iters=<n> launches=<n> checksum=<hex>
// Exit 0; 1 on a CUDA error; 2 on bad usage.
#include "test/gpu/graph_common.cuh"

static const int KT_MAX_ITERS = 4096;

extern "C" __global__ void kt_gc_step(float *x, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		x[i] = 0.5f * x[i] + 1.0f / (1.0f + x[i] * x[i]);
}

extern "C" __global__ void kt_gc_tally(int *tally, int n)
{
	if (threadIdx.x < n)
		tally[threadIdx.x] += 1;
}

extern "C" __global__ void kt_gc_record(const float *__restrict__ sums, float *out, const int *iter)
{
	if (threadIdx.x < KT_BINS)
		out[(*iter % KT_MAX_ITERS) * KT_BINS + threadIdx.x] = sums[threadIdx.x];
}

extern "C" __global__ void kt_gc_loop_cond(int *iter, cudaGraphConditionalHandle h, int limit)
{
	if (threadIdx.x == 0) {
		int next = *iter + 1;
		*iter = next;
		cudaGraphSetConditional(h, next < limit ? 1 : 0);
	}
}

struct cond_bufs {
	float *x, *partial, *sums, *out, *topx, *topsums;
	int *iter, *tally;
};

struct cond_args {
	int n, limit, blocks, one;
	cudaGraphConditionalHandle h;
	void *step[2], *tally[2], *block_sum[3], *final_sum[3], *atomic[3], *top_atomic[3], *record[3], *cond[3];
	cond_bufs b;
};

static cudaGraphNode_t add_kernel(cudaGraph_t g, cudaGraphNode_t *dep, void *fn, dim3 grid, dim3 block, void **args)
{
	cudaKernelNodeParams p = {};
	p.func = fn;
	p.gridDim = grid;
	p.blockDim = block;
	p.kernelParams = args;
	cudaGraphNode_t node;
	CK(cudaGraphAddKernelNode(&node, g, dep, dep ? 1 : 0, &p));
	return node;
}

static cudaGraphNode_t add_memset(cudaGraph_t g, cudaGraphNode_t *dep, void *dst, size_t words)
{
	cudaMemsetParams m = {};
	m.dst = dst;
	m.value = 0;
	m.elementSize = 4;
	m.width = words;
	m.height = 1;
	cudaGraphNode_t node;
	CK(cudaGraphAddMemsetNode(&node, g, dep, dep ? 1 : 0, &m));
	return node;
}

// The loop body: step, sums (planted or not), record, condition.
static void fill_body(cudaGraph_t body, cond_args &a, bool plant)
{
	cudaGraphNode_t k = add_kernel(body, nullptr, (void *)kt_gc_step, dim3(KT_BLOCKS), dim3(KT_THREADS), a.step);
	k = add_kernel(body, &k, (void *)kt_gc_tally, dim3(1), dim3(32), a.tally);
	k = add_memset(body, &k, a.b.sums, KT_BINS);
	if (plant) {
		k = add_kernel(body, &k, (void *)kt_g_atomic_sum, dim3(4 * KT_BLOCKS), dim3(KT_THREADS), a.atomic);
	} else {
		k = add_kernel(body, &k, (void *)kt_g_block_sum, dim3(KT_BLOCKS), dim3(KT_THREADS), a.block_sum);
		k = add_kernel(body, &k, (void *)kt_g_final_sum, dim3(1), dim3(32), a.final_sum);
	}
	k = add_kernel(body, &k, (void *)kt_gc_record, dim3(1), dim3(32), a.record);
	add_kernel(body, &k, (void *)kt_gc_loop_cond, dim3(1), dim3(32), a.cond);
}

static cudaGraph_t build_graph(cond_args &a, bool plant, bool plant_top)
{
	cudaGraph_t g;
	CK(cudaGraphCreate(&g, 0));
	CK(cudaGraphConditionalHandleCreate(&a.h, g, 1, cudaGraphCondAssignDefault));
	cudaGraphNode_t reset = add_memset(g, nullptr, a.b.iter, 1);
	if (plant_top) {
		reset = add_memset(g, &reset, a.b.topsums, KT_BINS);
		reset = add_kernel(g, &reset, (void *)kt_g_atomic_sum, dim3(4 * KT_BLOCKS), dim3(KT_THREADS), a.top_atomic);
	}
	fill_body(kt_add_while(g, &reset, a.h), a, plant);
	return g;
}

static void set_args(cond_args &a, int iters)
{
	a.n = KT_N, a.limit = iters, a.blocks = KT_BLOCKS, a.one = 1;
	a.step[0] = &a.b.x, a.step[1] = &a.n;
	a.tally[0] = &a.b.tally, a.tally[1] = &a.one;
	a.block_sum[0] = &a.b.x, a.block_sum[1] = &a.b.partial, a.block_sum[2] = &a.n;
	a.final_sum[0] = &a.b.partial, a.final_sum[1] = &a.b.sums, a.final_sum[2] = &a.blocks;
	a.atomic[0] = &a.b.x, a.atomic[1] = &a.b.sums, a.atomic[2] = &a.n;
	a.top_atomic[0] = &a.b.topx, a.top_atomic[1] = &a.b.topsums, a.top_atomic[2] = &a.n;
	a.record[0] = &a.b.sums, a.record[1] = &a.b.out, a.record[2] = &a.b.iter;
	a.cond[0] = &a.b.iter, a.cond[1] = &a.h, a.cond[2] = &a.limit;
}

static int usage()
{
	fprintf(stderr, "usage: graph_conditional [--plant] [--plant-top] [--iters N] [--launches N]\n");
	return 2;
}

int main(int argc, char **argv)
{
	bool plant = false, plant_top = false;
	int iters = 12, launches = 10;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--plant"))
			plant = true;
		else if (!strcmp(argv[i], "--plant-top"))
			plant_top = true;
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--launches") && i + 1 < argc)
			launches = atoi(argv[++i]);
		else
			return usage();
	}
	if (iters < 1 || iters > KT_MAX_ITERS || launches < 1)
		return usage();
	cond_args a;
	kt_counts counts;
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&a.b.x, KT_N * sizeof(float)));
	CK(cudaMalloc(&a.b.partial, KT_BLOCKS * KT_BINS * sizeof(float)));
	CK(cudaMalloc(&a.b.sums, KT_BINS * sizeof(float)));
	CK(cudaMalloc(&a.b.out, (size_t)KT_MAX_ITERS * KT_BINS * sizeof(float)));
	CK(cudaMalloc(&a.b.iter, sizeof(int)));
	CK(cudaMalloc(&a.b.topsums, KT_BINS * sizeof(float)));
	CK(cudaMalloc(&a.b.topx, KT_N * sizeof(float)));
	CK(cudaMemset(a.b.topsums, 0, KT_BINS * sizeof(float)));
	CK(cudaMalloc(&a.b.tally, 2 * sizeof(int)));
	CK(cudaMemset(a.b.tally, 0, 2 * sizeof(int)));
	CK(cudaMemset(a.b.out, 0, (size_t)KT_MAX_ITERS * KT_BINS * sizeof(float)));
	kt_g_init<<<KT_BLOCKS, KT_THREADS, 0, s>>>(a.b.x, KT_N, 7ull);
	CK(cudaGetLastError());
	counts.add_launched("kt_g_init", 1);
	if (plant_top) {
		kt_g_init<<<KT_BLOCKS, KT_THREADS, 0, s>>>(a.b.topx, KT_N, 11ull);
		CK(cudaGetLastError());
		counts.add_launched("kt_g_init", 1);
	}
	// the memsets above ran on the legacy stream, which does not order the
	// non-blocking stream s: wait for them, or the graphs' first reads of
	// topsums, tally and out race with them (ktrace-diff then sets those
	// regions aside)
	CK(cudaDeviceSynchronize());
	set_args(a, iters);
	cudaGraph_t g = build_graph(a, plant, plant_top);
	cudaGraphExec_t exec;
	CK(cudaGraphInstantiateWithFlags(&exec, g, 0));
	for (int k = 0; k < launches; k++)
		CK(cudaGraphLaunch(exec, s));
	CK(cudaStreamSynchronize(s));
	unsigned long runs = (unsigned long)launches * (unsigned long)iters;
	counts.add("kt_gc_step", runs);
	counts.add("kt_gc_tally", runs);
	kt_count_sums(counts, plant, runs);
	if (plant_top)
		counts.add("kt_g_atomic_sum", (unsigned long)launches);
	counts.add("kt_gc_record", runs);
	counts.add("kt_gc_loop_cond", runs);

	size_t nout = (size_t)iters * KT_BINS;
	float *hx = (float *)malloc(KT_N * sizeof(float)), *hout = (float *)malloc(nout * sizeof(float));
	KT_CHECK(hx && hout, "out of host memory");
	CK(cudaMemcpy(hx, a.b.x, KT_N * sizeof(float), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(hout, a.b.out, nout * sizeof(float), cudaMemcpyDeviceToHost));
	int tally[2];
	CK(cudaMemcpy(tally, a.b.tally, sizeof(tally), cudaMemcpyDeviceToHost));
	KT_CHECK(tally[0] == (int)runs && tally[1] == 0, "kt_gc_tally (n = 1) did not count the runs in tally[0] only");
	float htop[KT_BINS];
	CK(cudaMemcpy(htop, a.b.topsums, sizeof(htop), cudaMemcpyDeviceToHost));
	uint64_t all = kt_fnv(kt_fnv(kt_fnv(KT_FNV0, hx, KT_N * sizeof(float)), hout, nout * sizeof(float)), tally,
			      sizeof(tally));
	if (plant_top)
		all = kt_fnv(all, htop, sizeof(htop));
	counts.print();
	printf("ITERS %d\n", iters);
	printf("LAUNCHES %d\n", launches);
	printf("HANDLE %llu\n", (unsigned long long)a.h);
	printf("GRAPH_COPIES memcpy=0 memset=%lu\n", (unsigned long)launches * (plant_top ? 2 : 1) + runs);
	printf("OUTPUT %016llx\n", (unsigned long long)all);
	printf("graph_conditional mode=%s iters=%d launches=%d checksum=%016llx\n",
	       plant ? (plant_top ? "plant+top" : "plant") : plant_top ? "plant-top" : "det", iters,
	       launches, (unsigned long long)all);
	CK(cudaFree(a.b.topsums));
	CK(cudaFree(a.b.topx));
	CK(cudaGraphExecDestroy(exec));
	CK(cudaGraphDestroy(g));
	free(hx);
	free(hout);
	return 0;
}
